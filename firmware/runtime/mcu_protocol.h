/*
 * The framed serial protocol between the host (mcuforge/serial_link.py) and the firmware harness.
 * PROTOCOL.md beside this file describes it; the Python side mirrors these numbers.
 *
 * frame := MAGIC0 MAGIC1 command:u8 status:u8 length:u32le payload[length] crc:u32le
 * crc    = CRC-32/ISO-HDLC (zlib.crc32) over command, status, length and payload.
 */
#ifndef MCU_PROTOCOL_H
#define MCU_PROTOCOL_H

#define MCU_PROTO_VERSION 2u
#define MCU_PROTO_MAGIC0 0xA5u
#define MCU_PROTO_MAGIC1 0x5Au
#define MCU_PROTO_RESPONSE 0x80u          /* response command = request command | 0x80 */
#define MCU_PROTO_MAX_PAYLOAD 0x01000000u /* a longer length is a corrupted header: resync */

/* Commands. */
#define MCU_CMD_INFO 0x01u
#define MCU_CMD_WRITE_INPUT 0x02u
#define MCU_CMD_RUN 0x03u
#define MCU_CMD_READ_OUTPUT 0x04u
#define MCU_CMD_READ_PROFILE 0x05u
#define MCU_CMD_QUIT 0x06u
#define MCU_CMD_PROBE 0x07u /* run, answering with one layer's output bytes (per-layer readback) */
#define MCU_CMD_RESET 0x08u /* put the model's state (LSTM/SVDF) back to its initial value */

/* RUN flags (optional 1-byte payload). */
#define MCU_RUN_PROFILE 0x01u

/* Response status; a non-zero status carries a UTF-8 message as its payload. */
#define MCU_STATUS_OK 0u
#define MCU_STATUS_BAD_CRC 1u
#define MCU_STATUS_UNKNOWN_COMMAND 2u
#define MCU_STATUS_BAD_LENGTH 3u
#define MCU_STATUS_BAD_INDEX 4u
#define MCU_STATUS_WRONG_SIZE 5u
#define MCU_STATUS_MODEL_ERROR 6u
#define MCU_STATUS_NO_PROFILE 7u
#define MCU_STATUS_FAULT 8u
#define MCU_STATUS_BOOT 9u  /* unsolicited, command 0x80: the firmware (re)started */
#define MCU_STATUS_GUARD 10u /* a guard build found a canary overwritten after RUN */

/* INFO flags (the u16 after the version). */
#define MCU_INFO_GUARDED 0x0001u /* a guard build: canaries around the arena and at the stack limit */

#endif /* MCU_PROTOCOL_H */
