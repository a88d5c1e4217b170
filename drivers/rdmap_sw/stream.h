/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: a QP's connection in full operation.  A stream joins one
 * connected TCP socket (after the MPA exchange) with one RC QP: the RX
 * parser (rx.c) feeding the placement glue, the TX engine (tx.c) draining
 * the send queue and answering Read Requests, Terminate, and the orderly
 * and abortive ends of the connection.  The functions are listed in
 * internal.h (stream.c group); the model is described at the top of
 * stream.c.
 */
#ifndef _RDMAP_SW_STREAM_H
#define _RDMAP_SW_STREAM_H

struct rsw_stream;

/*
 * What the stream reports to whoever attached it (the iw_cm glue, or a
 * KUnit test), from the stream's work item: process context, may sleep,
 * no lock held.  Both optional.
 */
struct rsw_stream_ops {
	/* The peer closed its side in order (TCP FIN at an FPDU boundary). */
	void (*disconnect)(void *ctx);
	/*
	 * The stream is over: the QP is in ERROR with everything flushed and
	 * the socket released.  @status: 0 after an orderly close, else why
	 * it ended (-ECONNRESET, -ECONNABORTED after a Terminate, ...).
	 * Called exactly once, last.
	 */
	void (*closed)(void *ctx, int status);
};

/*
 * Counters of one stream, for tests (rsw_stream_stats()); what
 * administrators see are the counters of stats.h, which every stream
 * also counts into (its QP's route: the device's set, or a bound rdma
 * counter's).
 */
struct rsw_stream_stats {
	u64 rx_fpdus;		/* valid segments received */
	u64 tx_calls;		/* TX engine runs */
	u64 tx_spliced;		/* octets sent zero-copy (MSG_SPLICE_PAGES) */
	u32 term_sent;		/* Terminates sent (0 or 1) */
	u32 term_rcvd;		/* Terminates received (0 or 1) */
	struct rsw_term_cause term;	/* the Terminate sent or received */
};

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit only: @stall (NULL: none) is called at the start of the stream's
 * work (@linger false) and of its linger timeout (@linger true), before
 * either touches the stream, so a test can hold one of them there
 * (stream_kunit.c).
 */
void rsw_stream_kunit_set_stall(void (*stall)(bool linger));
/* KUnit only: the RTR deadline in ms (0: the default); the old one. */
unsigned int rsw_stream_kunit_set_rtr_ms(unsigned int ms);
/*
 * KUnit only: the linger timeout and the orderly close's deadline in ms
 * (0: the default); the old one.
 */
unsigned int rsw_stream_kunit_set_linger_ms(unsigned int ms);
#endif

#endif /* _RDMAP_SW_STREAM_H */
