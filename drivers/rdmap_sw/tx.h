/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: the transmit side of one connection in full operation: send
 * WQEs, Read Responses and Terminates turned into MPA FPDUs (RFC 5044
 * framing, RFC 5041 DDP segments, RFC 5040 RDMAP headers).  The functions
 * are declared in internal.h (tx.c group); this header holds the engine's
 * state and the output abstraction a sink implements.
 *
 * Output.  The engine never touches a socket.  It describes each FPDU as
 * an rsw_tx_fpdu: the header octets (ULPDU_Length through the last RDMAP
 * header field) in a small buffer, the payload as pieces that are either
 * (page, offset, length) of registered memory or a kernel pointer (inline
 * data of the WQE copy), and the trailer (PAD and CRC).  The MPA CRC is
 * computed once, while the FPDU is described.  A batch of consecutive
 * FPDUs is handed to the sink's send(); a socket sink turns the batch into
 * bio_vec iov_iters for tcp_sendmsg_locked() (MSG_MORE while @more); the page
 * pieces of FPDUs marked @splice that come from a user MR go out with
 * MSG_SPLICE_PAGES (zero copy), everything else is copied by TCP.
 *
 * The sink returns how many FPDUs of the batch it took (0..n), or a
 * negative errno for a broken stream.  Fewer than n means "full, call
 * again later": the engine keeps its position and describes the FPDUs not
 * taken again on its next call, identically while their memory is unchanged
 * (same message offset, pieces and CRC), so an FPDU the socket took only in
 * part counts as not taken and the sink skips the octets it already sent
 * (tx_sock.c).  Such an FPDU must be finished before anything else can go
 * out: a stream that stops mid-message for its Terminate has the engine
 * emit just that FPDU (rsw_tx_next_fpdu(), a batch of one), then abandons
 * the message (rsw_tx_abort()) and sends the Terminate, which so starts
 * at an FPDU boundary.
 * @more is true while the batch does not end the message in progress.
 *
 * Lifetime of page pieces: no memory is read for sending after its owner
 * could have freed it.  Each page piece holds, from its collection until
 * send() returned, what keeps its memory the MR's (mem.c: a page
 * reference for a user MR, a count that invalidation and dereg_mr wait
 * for on a fast-reg MR); the engine drops it when send() returns,
 * whatever send() took.  So send() may read every piece, and must not
 * keep a pointer to one after it returned.  A splicing sink hands pages
 * to TCP with MSG_SPLICE_PAGES: TCP takes its own page references for as
 * long as it keeps them (retransmission), and the engine's go as usual.
 */
#ifndef _RDMAP_SW_TX_H
#define _RDMAP_SW_TX_H

#include <linux/bvec.h>
#include <linux/types.h>
#include <rdma/rdmap_sw-abi.h>

#include "mem.h"
#include "qp.h"
#include "rx.h"
#include "wire.h"

/* Payload pieces of one FPDU; a segment ends early when they run out. */
#define RSW_TX_MAX_PIECES	24
/* FPDUs described before the sink is called. */
#define RSW_TX_BATCH		8
/*
 * The least MSS FPDUs are sized for (TCP's default MSS): below it, a
 * multiple of TCP's MSS (tx.c rsw_tx_eff_mss()), so a peer's tiny MSS
 * option or window does not make our FPDUs tiny, and each FPDU is still
 * whole segments.
 */
#define RSW_TX_MSS_MIN		536
/*
 * With Markers, FPDUs are sized for an EMSS of at most this (a sender may
 * send FPDUs smaller than MULPDU), which bounds the Markers inside one
 * FPDU, and so the bio_vecs of a batch, to RSW_TX_MAX_MARKERS.
 */
#define RSW_TX_MARKER_EMSS	8192
#define RSW_TX_MAX_MARKERS	(RSW_TX_MARKER_EMSS / \
				 (RSW_MPA_MARKER_SPACING - RSW_MPA_MARKER_LEN) + 2)

/*
 * One payload piece: @page + @off, or @kva when @page is NULL.  A page
 * piece holds @hold on @mr's memory until the engine releases it.
 */
struct rsw_tx_piece {
	struct page *page;
	const void *kva;
	struct rsw_mr *mr;
	u32 off;
	u32 len;
	enum rsw_mr_hold hold;
};

/*
 * One FPDU as sent: hdr_len header octets, the pieces, trailer_len octets
 * (payload_len + hdr_len + trailer_len: its plain length), with, when the
 * stream sends MPA Markers, its @nmk Markers inserted by the sink: Marker
 * k goes right before plain octet rsw_mpa_mk_plain(@start, k).
 */
struct rsw_tx_fpdu {
	union {
		union rsw_hdr hdr;
		u8 hdr_octets[RSW_HDR_MAX_LEN];
	};
	u32 hdr_len;
	u32 payload_len;
	u32 npieces;
	u32 trailer_len;		/* PAD + CRC */
	u8 trailer[RSW_MPA_ALIGN - 1 + RSW_MPA_CRC_LEN];
	u32 msg_end;			/* message offset after this FPDU */
	u32 start;			/* stream offset of its first octet */
	u32 nmk;			/* Markers inside it (0 without) */
	struct rsw_mpa_marker mk[RSW_TX_MAX_MARKERS];
	bool last;			/* DDP L flag */
	/*
	 * Page pieces may be spliced (zero copy): a Read Response without MPA CRC,
	 * from a user MR (a kernel consumer's fast-registered pages may be reused
	 * once an invalidation completed).  TCP then reads the memory when it
	 * (re)transmits, later than the engine; with CRC the trailer was computed
	 * from the memory as it was when described, so a source written meanwhile
	 * (which a Read of live memory permits) would go out with a CRC that does
	 * not match and the peer would terminate.  With CRC the payload is copied
	 * at send() time, as it is for every other FPDU, which shrinks that window
	 * to one batch's describe-to-sendmsg (a fused copy-and-CRC would close
	 * it).
	 */
	bool splice;
	struct rsw_tx_piece piece[RSW_TX_MAX_PIECES];
};

/*
 * The sink.  send() runs in the context of the engine's caller and must
 * not sleep if the caller may not (the engine itself never sleeps).
 * @more: more octets follow at once, within the message or, at its end,
 * the next message (the engine saw another WQE posted): the sink may hold
 * them back to coalesce, and its owner must push what it held when the
 * engine stops (rsw_tx_sock.corked).
 */
struct rsw_tx_sink_ops {
	int (*send)(void *ctx, const struct rsw_tx_fpdu *f, unsigned int n,
		    bool more);
};

/* Negotiated parameters of the stream. */
struct rsw_tx_config {
	bool crc;		/* MPA CRC negotiated (else the field is 0) */
	bool markers;		/* send MPA Markers (the peer asked) */
	u32 mss;		/* effective MSS of the TCP connection */
	u32 max_ulpdu;		/* optional lower cap on the ULPDU, 0: none */
	u32 ord;		/* Reads in flight at most (ORD); 0: none */
	u64 qp;			/* the QP's serial (type 2 windows); 0: none */
	u32 qpn;		/* the QP's number, for tracepoints */
};

/*
 * An inbound Read Request to answer (RFC 5040 section 4.4 fields): the
 * Read Response goes to the requester's sink, from the local source.
 */
/*
 * A response owed to the peer, in the order its requests came (RFC 7306
 * section 7): a Read Response, or with @atomic the Atomic Response of an
 * Atomic Request on @src_stag/@src_to, executed when it is its turn.
 */
struct rsw_tx_rresp {
	u32 sink_stag;
	u64 sink_to;
	u32 src_stag;
	u64 src_to;
	u32 len;
	bool atomic;
	__be32 req_id;			/* Atomic: Request Identifier */
	struct rsw_atomic op;		/* Atomic: operation, operands */
	/* The request's headers, for a Terminate if it is refused. */
	struct rsw_ddp_untagged ddp;
	struct rsw_rdmap_rreq rreq;	/* Read only */
};

/*
 * A Terminate to send (RFC 5040 section 4.8): the reason as RX reports it
 * (@why.ddp_hdr: @hdr holds segment length + DDP header; @why.rdma_hdr: a
 * Read Request header follows it), and those octets of the offending
 * segment, from rsw_rx.hdr_octets (rsw_tx_term_from_rx() fills both).
 */
struct rsw_tx_term {
	struct rsw_rx_term why;
	u8 hdr[RSW_HDR_MAX_LEN];
};

/* Where the payload of the message in progress comes from. */
enum rsw_tx_src {
	RSW_TX_SRC_NONE,	/* no payload (Read Request, Terminate) */
	RSW_TX_SRC_SGE,		/* tx->sqe.sge[], local lkeys */
	RSW_TX_SRC_INLINE,	/* tx->sqe.inline_data */
	RSW_TX_SRC_MR,		/* Read Response: src_stag / src_to */
};

/* What the message in progress is for, i.e. what finishing it does. */
enum rsw_tx_kind {
	RSW_TX_IDLE,		/* no message in progress */
	RSW_TX_WQE,		/* Send or Write: complete the WQE */
	RSW_TX_READ,		/* Read or Atomic Request: WQE outstanding */
	RSW_TX_RRESP,		/* Read or Atomic Response: nothing to complete */
	RSW_TX_TERM,		/* Terminate */
};

/* The message in progress. */
struct rsw_tx_msg {
	enum rsw_tx_kind kind;
	enum rsw_tx_src src;
	u8 op;			/* enum rsw_rdmap_opcode */
	u32 len;		/* payload octets */
	u32 done;		/* payload octets taken by the sink */
	u32 stag;		/* tagged: sink STag, base TO */
	u64 to;
	u32 inval_stag;		/* Send with Invalidate */
	bool imm_next;		/* Write with Immediate: Immediate Data next */
	u32 src_stag;		/* RSW_TX_SRC_MR */
	u64 src_to;
	union {
		struct rsw_hdr_rreq rreq;	/* Read Request header */
		struct rsw_tx_term term;	/* Terminate */
		struct rsw_rdmap_atomic_req atomic;	/* Atomic Request */
		struct rsw_rdmap_atomic_resp aresp;	/* Atomic Response */
		struct rsw_rdmap_imm imm;	/* Immediate Data */
	};
};

/*
 * An outstanding Read Request: what its Read Response may place and what
 * completing it does.
 */
struct rsw_tx_rd {
	u32 idx;		/* SQ ticket */
	u32 len;		/* read size */
	u32 sink_stag;		/* 0 when len is 0 */
	u64 sink_to;
	u32 inv_stag;		/* READ_WITH_INV: the sink STag, invalidated */
	bool inv;
	/* An Atomic Request: the result goes to sink_stag/sink_to, len 8. */
	bool atomic;
	__be32 req_id;		/* its Request Identifier */
};

/* TX state of one stream; owned by the QP, serialised by its caller. */
struct rsw_tx {
	struct rsw_tx_config cfg;
	u32 mulpdu;			/* largest ULPDU sent */
	struct rsw_device *rsw;
	struct ib_pd *pd;
	const struct rsw_tx_sink_ops *sink;
	void *sink_ctx;
	/* Counters (stats.h): the owner's route, or NULL; set after init. */
	const struct rsw_stats_route *route;

	u32 msn[RSW_QN_NUM];		/* next MSN per untagged queue */
	struct rsw_tx_msg msg;
	u32 sqe_idx;			/* ticket of tx->sqe while in progress */
	bool sqe_pending;		/* taken, waiting for a fence or ORD */
	bool sqe_local;			/* tx->sqe is a fenced local op */
	bool msg_more;			/* another WQE follows this one */
	struct rdmap_sw_sqe sqe;	/* copy of the WQE being sent */

	/* Read Requests sent, waiting for their last Read Response. */
	struct rsw_tx_rd rd[RSW_MAX_RD_ATOM];
	u32 rd_head;
	u32 rd_tail;

	/* Stream offset of the next FPDU (Marker positions): sent octets. */
	u32 off;
	u32 nbatch;
	struct rsw_tx_fpdu batch[RSW_TX_BATCH];
};

/*
 * Bio_vecs of one batch: header, trailer and pointer pieces may each
 * straddle a page end; each Marker is one and splits one more.
 */
#define RSW_TX_SOCK_BVECS	(RSW_TX_BATCH * (2 * RSW_TX_MAX_PIECES + 4 + \
						 2 * RSW_TX_MAX_MARKERS))

/* The socket sink (tx_sock.c): one per stream, owned with its rsw_tx. */
struct rsw_tx_sock {
	struct socket *sock;
	/* Octets of the next FPDU already sent: nothing else may go first. */
	u32 skip;
	u32 skip_len;		/* its length then */
	u64 spliced;		/* octets sent with MSG_SPLICE_PAGES */
	bool corked;		/* the last octets went with MSG_MORE */
	struct bio_vec bv[RSW_TX_SOCK_BVECS];
	bool zc[RSW_TX_SOCK_BVECS];	/* bv[i] may be spliced */
	/* bv[i] starts an FPDU that starts a TCP segment (alignment) */
	DECLARE_BITMAP(cut, RSW_TX_SOCK_BVECS);
	u64 cuts;		/* FPDUs so aligned */
	/* Counters (stats.h): the owner's route, or NULL; set after init. */
	const struct rsw_stats_route *route;
};

#endif /* _RDMAP_SW_TX_H */
