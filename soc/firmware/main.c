/*
 * hhe-gen firmware: the SoC's CPU between the host and the accelerator.
 *
 * The host talks to it through the mailbox CSRs (soc/mailbox.py): it writes the arguments, then
 * mailbox_command = (sequence << 8) | code, and polls mailbox_reply for the sequence number.
 * The SoC defines HHE_N, HHE_UDP_PORT, HHE_INSTR_DEPTH, HHE_LOCAL_IP and HHE_REMOTE_IP (soc/integration.py).
 * Commands (docs/soc.md has the table):
 *   PING     -> value0 = firmware version, value1 = N, value2 = the instruction FIFO's depth,
 *            value3 = 1 once the host's address is resolved (ARP; SEND needs it)
 *   RUN      arg0 = engine word address of a program in RAM, arg1 = its words, arg2 = time-out in
 *            system clock cycles (0: default, 2^31).  The words are checked, loaded into the FIFO with
 *            hold set, released, and the run awaited on the accelerator's interrupt (its `done` and
 *            `error` events): value0 = busy cycles, value1 = error position (the failing word's
 *            index in this program, from 0), value2 = notify code, value3 = interrupts taken during
 *            the run; status = 0x100 | cause on an engine error.  An error left by the previous
 *            program is cleared first (an abort): a RUN is a new program.
 *   SEND     the CPU-driven path: arg0 / arg1 = engine word addresses of c0 / c1 (NTT form),
 *            arg2 = rows | log_scale << 8 | segment << 16, arg3 = message id.  The CPU reads the
 *            rows over the bus and sends them as wire-format packets (docs/wire.md) through the
 *            CPU's MAC: value0 = cycles, value1 = packets.
 *   KEYCHECK arg0 = 32-bit words the host wrote into the key vault; status KEY_TRUNCATED unless the
 *            vault counted as many (the vault itself cannot be read, by design).
 * Every command ends with a reply; an unknown one with UNKNOWN_COMMAND; bad arguments with
 * BAD_ARGUMENT; a run that does not finish in time is aborted (TIMEOUT).  Each is logged on the
 * UART.
 */

#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <libbase/uart.h>
#include <libliteeth/udp.h>
#include <libliteeth/inet.h>
#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <system.h>
#include <irq.h>
#ifdef CSR_SDRAM_BASE
#include <liblitedram/sdram.h>
#endif

#define FIRMWARE_VERSION 1

enum { CMD_PING = 1, CMD_RUN = 2, CMD_SEND = 3, CMD_KEYCHECK = 4 };
enum {
	ST_OK = 0, ST_ENGINE = 0x100, ST_UNKNOWN_COMMAND = 0x201, ST_BAD_ARGUMENT = 0x202,
	ST_TIMEOUT = 0x203, ST_KEY_TRUNCATED = 0x204, ST_NO_ROUTE = 0x205
};
enum { CTRL_ABORT = 1, CTRL_CLEAR = 2, CTRL_HOLD = 4 };
enum { EV_DONE = 1, EV_ERROR = 2 };          /* the accelerator's EventManager (soc/accelerator.py) */

#define RAM_WORDS (MAIN_RAM_SIZE / 8)
#define MAX_PROGRAM 65536u
#define DEFAULT_TIMEOUT 0x7fffffffu
#define WIRE_VERSION 2
#define WIRE_HEADER 24
#define WIRE_CRC 4                             /* the CRC-32 trailer after the coefficients */
#define WIRE_MAX_COUNT 180                     /* (1472 - 24 - 4) / 8 */

static uint64_t ram_word(uint32_t word)
{
	volatile uint32_t *p = (volatile uint32_t *)(MAIN_RAM_BASE + 8u * word);
	return (uint64_t)p[0] | ((uint64_t)p[1] << 32);
}

/* Set by the accelerator's interrupt: the events it saw (acknowledged there), and how many times. */
static volatile uint32_t accel_events, accel_interrupts;

static void accel_isr(void)
{
	uint32_t pending = accel_ev_pending_read();
	accel_ev_pending_write(pending);
	accel_events |= pending;
	accel_interrupts++;
}

static void accel_irq_start(void)
{
	accel_ev_pending_write(EV_DONE | EV_ERROR);
	accel_ev_enable_write(EV_DONE | EV_ERROR);
	irq_attach(ACCEL_INTERRUPT, accel_isr);
	irq_setmask(irq_getmask() | (1u << ACCEL_INTERRUPT));
	irq_setie(1);
}

static uint64_t uptime(void)
{
	timer0_uptime_latch_write(1);
	return timer0_uptime_cycles_read();
}

static void reply(uint32_t seq, uint32_t status, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3)
{
	mailbox_value0_write(v0);
	mailbox_value1_write(v1);
	mailbox_value2_write(v2);
	mailbox_value3_write(v3);
	mailbox_status_write(status);
	mailbox_reply_write(seq);
}

static uint32_t run(uint32_t address, uint32_t words, uint32_t timeout, uint32_t *v)
{
	uint32_t k;
	uint64_t start;
	if (words == 0 || words > MAX_PROGRAM || address >= RAM_WORDS || words > RAM_WORDS - address)
		return ST_BAD_ARGUMENT;
	if (timeout == 0)
		timeout = DEFAULT_TIMEOUT;
	/* A RUN is a new program: an error the last one stopped on (the engine stays stopped until an
	   abort) is cleared by an abort first, which also empties the instruction and receive FIFOs;
	   then wait for it to take effect (with the accelerator on a clock of its own the status
	   crosses a few cycles later). */
	if (accel_status_read() & 2) {
		accel_control_write(CTRL_ABORT);
		start = uptime();
		while (accel_status_read() & 3) {
			if (uptime() - start > timeout)
				return ST_TIMEOUT;
		}
	}
	flush_cpu_dcache();
	accel_control_write(CTRL_CLEAR | CTRL_HOLD);
	accel_interrupts = 0;
	for (k = 0; k < words && k < HHE_INSTR_DEPTH; k++)
		accel_instr_write(ram_word(address + k));
	accel_control_write(0);
	start = uptime();
	for (; k < words; ) {
		uint32_t st = accel_instr_status_read();
		if (!(st >> 16 & 1)) {
			accel_instr_write(ram_word(address + k));
			k++;
		} else if (uptime() - start > timeout) {
			accel_control_write(CTRL_ABORT);
			return ST_TIMEOUT;
		}
	}
	/* Every word is in.  An interrupt before this point may be a `done` of the FIFO running dry
	   while it was fed: forget it, then wait for the next one unless the engine is idle already
	   (an event after the flag is cleared is kept, so none is missed between the two). */
	irq_setie(0);
	accel_events = 0;
	irq_setie(1);
	if ((accel_status_read() & 3) == 1) {
		while (!(accel_events & (EV_DONE | EV_ERROR))) {
			if (uptime() - start > timeout) {
				accel_control_write(CTRL_ABORT);
				return ST_TIMEOUT;
			}
		}
	}
	v[3] = accel_interrupts;
	/* The status as the CSR shows it: with the accelerator on a clock of its own it crosses a
	   cycle or two after the event, so read it until it agrees. */
	for (;;) {
		uint32_t st = accel_status_read();
		if (st & 2) {
			v[0] = accel_busy_cycles_read();
			v[1] = accel_error_position_read();
			v[2] = accel_notify_code_read();
			return ST_ENGINE | (st >> 3 & 0xf);
		}
		if (!(st & 1))
			break;
		if (uptime() - start > timeout) {
			accel_control_write(CTRL_ABORT);
			return ST_TIMEOUT;
		}
	}
	v[0] = accel_busy_cycles_read();
	v[1] = accel_error_position_read();
	v[2] = accel_notify_code_read();
	return ST_OK;
}

static void put16(uint8_t *p, uint32_t x) { p[0] = x; p[1] = x >> 8; }
static void put32(uint8_t *p, uint32_t x) { put16(p, x); put16(p + 2, x >> 16); }

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320: zlib.crc32) of n bytes, a nibble at a time. */
static const uint32_t crc_nibble[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
	0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

static uint32_t wire_crc32(const uint8_t *p, uint32_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		c = (c >> 4) ^ crc_nibble[c & 15];
		c = (c >> 4) ^ crc_nibble[c & 15];
	}
	return ~c;
}

/* One polynomial's rows as wire-format packets (the layout of hhe_gen.models.wire, version 2:
   header, coefficients, the CRC-32 of both). */
static int send_rows(uint32_t base, uint32_t kind, uint32_t rows, uint32_t log_scale, uint32_t segment,
		     uint32_t message, uint32_t *sequence)
{
	uint32_t row, offset, i, count;
	for (row = 0; row < rows; row++) {
		for (offset = 0; offset < HHE_N; offset += count) {
			uint8_t *buf = udp_get_tx_buffer();
			count = HHE_N - offset < segment ? HHE_N - offset : segment;
			put16(buf, 0x4848);
			buf[2] = WIRE_VERSION;
			buf[3] = kind;
			put32(buf + 4, message);
			buf[8] = row;
			buf[9] = rows;
			buf[10] = log_scale;
			buf[11] = 1;                          /* NTT form */
			put16(buf + 12, *sequence);
			put16(buf + 14, count);
			put32(buf + 16, offset);
			put32(buf + 20, HHE_N);
			for (i = 0; i < count; i++) {
				uint64_t w = ram_word(base + row * HHE_N + offset + i);
				put32(buf + WIRE_HEADER + 8 * i, (uint32_t)w);
				put32(buf + WIRE_HEADER + 8 * i + 4, (uint32_t)(w >> 32));
			}
			put32(buf + WIRE_HEADER + 8 * count, wire_crc32(buf, WIRE_HEADER + 8 * count));
			if (!udp_send(HHE_UDP_PORT, HHE_UDP_PORT, WIRE_HEADER + 8 * count + WIRE_CRC))
				return -1;
			(*sequence)++;
		}
	}
	return 0;
}

static uint32_t send(uint32_t c0, uint32_t c1, uint32_t shape, uint32_t message, uint32_t *v)
{
	uint32_t rows = shape & 0xff, log_scale = shape >> 8 & 0xff, segment = shape >> 16;
	uint32_t sequence = 0;
	uint64_t t0;
	if (rows == 0 || rows > 64 || segment == 0 || segment > WIRE_MAX_COUNT
	    || c0 >= RAM_WORDS || c1 >= RAM_WORDS || rows * HHE_N > RAM_WORDS - c0 || rows * HHE_N > RAM_WORDS - c1)
		return ST_BAD_ARGUMENT;
	t0 = uptime();
	flush_cpu_dcache();
	if (!udp_arp_resolve(HHE_REMOTE_IP))
		return ST_NO_ROUTE;
	if (send_rows(c0, 1, rows, log_scale, segment, message, &sequence)
	    || send_rows(c1, 2, rows, log_scale, segment, message, &sequence))
		return ST_NO_ROUTE;
	v[0] = (uint32_t)(uptime() - t0);
	v[1] = sequence;
	return ST_OK;
}

int main(void)
{
	static const unsigned char mac[6] = {0x10, 0xe2, 0xd5, 0x00, 0x00, 0x01};
	uint32_t last = mailbox_command_read() >> 8;
	uart_init();                                  /* polled: the SoC defines UART_POLLING */
	printf("hhe-gen firmware %d: N = %d, accelerator FIFO %d words\n", FIRMWARE_VERSION, HHE_N, HHE_INSTR_DEPTH);
#ifdef CSR_SDRAM_BASE
	/* boards: the DRAM holds the engine's memory map and the key vault; the BIOS is not there to
	   calibrate it */
	if (!sdram_init())
		printf("DRAM initialisation FAILED: the accelerator's memory is unusable\n");
#endif
	timer0_en_write(0);
	timer0_reload_write(0);
	timer0_load_write(0xffffffff);
	timer0_en_write(1);
	udp_start(mac, HHE_LOCAL_IP);
	accel_irq_start();
	printf("mailbox ready\n");
	for (;;) {
		uint32_t command = mailbox_command_read();
		uint32_t seq = command >> 8, code = command & 0xff, status;
		uint32_t v[4] = {0, 0, 0, 0}, k;
		if (seq == last)
			continue;
		last = seq;
		switch (code) {
		case CMD_PING:
			v[0] = FIRMWARE_VERSION;
			v[1] = HHE_N;
			v[2] = HHE_INSTR_DEPTH;
			for (k = 0; k < 64; k++)                 /* frames waiting in the receive slots first */
				udp_service();
			v[3] = udp_arp_resolve(HHE_REMOTE_IP);   /* the host's MAC, learnt once: SEND sends at once */
			status = v[3] ? ST_OK : ST_NO_ROUTE;
			break;
		case CMD_RUN:
			status = run(mailbox_arg0_read(), mailbox_arg1_read(), mailbox_arg2_read(), v);
			break;
		case CMD_SEND:
			status = send(mailbox_arg0_read(), mailbox_arg1_read(), mailbox_arg2_read(), mailbox_arg3_read(), v);
			break;
		case CMD_KEYCHECK:
			v[0] = accel_vault_writes_read();
			status = v[0] == mailbox_arg0_read() ? ST_OK : ST_KEY_TRUNCATED;
			break;
		default:
			status = ST_UNKNOWN_COMMAND;
		}
		printf("command %lu (code %lu): status 0x%lx, values %lu %lu %lu\n", (unsigned long)seq,
		       (unsigned long)code, (unsigned long)status, (unsigned long)v[0], (unsigned long)v[1],
		       (unsigned long)v[2]);
		reply(seq, status, v[0], v[1], v[2], v[3]);
	}
	return 0;
}
