"""`python -m devtools.fuzz worker`: the worker process of devtools.fuzz.worker.Worker."""

import sys

from devtools.fuzz.worker import worker_main

if sys.argv[1:] == ["worker"]:
    sys.exit(worker_main())
sys.exit("usage: python -m devtools.fuzz worker (the long run is tools/fuzz_models.py)")
