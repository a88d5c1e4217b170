/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw tracepoints (TRACE_SYSTEM rdmap_sw; use and fields in
 * Documentation/admin.rst, "Tracepoints").  trace.c alone defines
 * CREATE_TRACE_POINTS; every other file includes this header to call the
 * trace_rsw_*() hooks.
 *
 * Rules for the call sites:
 *  - every field is copied by value in TP_fast_assign, so TP_printk never
 *    follows a pointer; a pointer argument (a wire header, a Terminate
 *    cause) is read only there, i.e. only while the event is enabled, and
 *    must be stable at the call (the lock or owner each site names);
 *  - from a peer's FPDU only header fields are recorded, never payload;
 *  - an argument that costs something to compute is computed under
 *    trace_rsw_<name>_enabled() (a static key: free while disabled);
 *  - nothing is traced inside the RX parser (rx.c), which stays free of
 *    side effects: its consumer (stream_rx.c) traces what it reports.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmap_sw

#if !defined(_RDMAP_SW_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMAP_SW_TRACE_H

#include <linux/tracepoint.h>

#include "cm.h"
#include "qp.h"
#include "wire.h"

/*
 * Name tables of __print_symbolic().  Each list is expanded twice: once to
 * TRACE_DEFINE_ENUM() (so that the format file, and so trace-cmd and perf,
 * show numbers rather than enum names), once to { value, name } pairs.
 */
#define RSW_TRACE_OPCODES					\
	RSW_EM(RSW_OP_WRITE, "write")				\
	RSW_EM(RSW_OP_READ_REQ, "read_req")			\
	RSW_EM(RSW_OP_READ_RESP, "read_resp")			\
	RSW_EM(RSW_OP_SEND, "send")				\
	RSW_EM(RSW_OP_SEND_INV, "send_inv")			\
	RSW_EM(RSW_OP_SEND_SE, "send_se")			\
	RSW_EM(RSW_OP_SEND_SE_INV, "send_se_inv")		\
	RSW_EM(RSW_OP_TERMINATE, "terminate")			\
	RSW_EM(RSW_OP_IMM_DATA, "imm_data")			\
	RSW_EM(RSW_OP_IMM_DATA_SE, "imm_data_se")		\
	RSW_EM(RSW_OP_ATOMIC_REQ, "atomic_req")			\
	RSW_EMe(RSW_OP_ATOMIC_RESP, "atomic_resp")

#define RSW_TRACE_TERM_LAYERS					\
	RSW_EM(RSW_TERM_LAYER_RDMAP, "rdmap")			\
	RSW_EM(RSW_TERM_LAYER_DDP, "ddp")			\
	RSW_EMe(RSW_TERM_LAYER_LLP, "llp")

/* RSW_CEP_NUM: a cep's first state has none before it. */
#define RSW_TRACE_CEP_STATES					\
	RSW_EM(RSW_CEP_LISTENING, "listening")			\
	RSW_EM(RSW_CEP_CONNECTING, "connecting")		\
	RSW_EM(RSW_CEP_AWAIT_REPLY, "await_reply")		\
	RSW_EM(RSW_CEP_AWAIT_REQUEST, "await_request")		\
	RSW_EM(RSW_CEP_REQ_RCVD, "req_rcvd")			\
	RSW_EM(RSW_CEP_CONNECTED, "connected")			\
	RSW_EM(RSW_CEP_CLOSED, "closed")			\
	RSW_EMe(RSW_CEP_NUM, "none")

#define RSW_TRACE_QP_STATES					\
	RSW_EM(RSW_QPS_IDLE, "idle")				\
	RSW_EM(RSW_QPS_RTS, "rts")				\
	RSW_EM(RSW_QPS_CLOSING, "closing")			\
	RSW_EM(RSW_QPS_TERMINATE, "terminate")			\
	RSW_EMe(RSW_QPS_ERROR, "error")

#undef RSW_EM
#undef RSW_EMe
#define RSW_EM(a, b)	TRACE_DEFINE_ENUM(a);
#define RSW_EMe(a, b)	TRACE_DEFINE_ENUM(a);

RSW_TRACE_OPCODES
RSW_TRACE_TERM_LAYERS
RSW_TRACE_CEP_STATES
RSW_TRACE_QP_STATES

#undef RSW_EM
#undef RSW_EMe
#define RSW_EM(a, b)	{ a, b },
#define RSW_EMe(a, b)	{ a, b }

/*
 * One FPDU's DDP/RDMAP header, as sent or as received whole and valid:
 * @hdr is the wire header from ULPDU_Length on (union rsw_hdr).  @len is
 * the MPA ULPDU_Length, the DDP segment's length; untagged segments fill
 * qn/msn/mo, tagged ones stag/to (the other model's fields are 0).
 * The RX event decodes this raw header, not the parsed segment: it relies
 * on rx.c calling seg_done (stream_rx.c, where it fires) only once the
 * header checks and the MPA CRC passed (rsw_rx_crc()).
 */
DECLARE_EVENT_CLASS(rsw_fpdu_class,
	TP_PROTO(u32 qpn, const union rsw_hdr *hdr),
	TP_ARGS(qpn, hdr),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u8, opcode)
		__field(bool, tagged)
		__field(bool, last)
		__field(u16, len)
		__field(u32, stag)
		__field(u64, to)
		__field(u32, qn)
		__field(u32, msn)
		__field(u32, mo)
	),
	TP_fast_assign(
		const struct rsw_ctrl *c = &hdr->c;

		__entry->qpn = qpn;
		__entry->opcode = rsw_rdmap_opcode(c);
		__entry->tagged = rsw_ddp_tagged(c);
		__entry->last = rsw_ddp_last(c);
		__entry->len = rsw_mpa_len(c);
		__entry->stag = 0;
		__entry->to = 0;
		__entry->qn = 0;
		__entry->msn = 0;
		__entry->mo = 0;
		if (__entry->tagged) {
			__entry->stag = be32_to_cpu(hdr->tagged.stag);
			__entry->to = be64_to_cpu(hdr->tagged.to);
		} else {
			__entry->qn = be32_to_cpu(hdr->untagged.qn);
			__entry->msn = be32_to_cpu(hdr->untagged.msn);
			__entry->mo = be32_to_cpu(hdr->untagged.mo);
		}
	),
	TP_printk("qp=%u op=%s tagged=%u last=%u len=%u stag=0x%08x to=0x%llx qn=%u msn=%u mo=%u",
		  __entry->qpn,
		  __print_symbolic(__entry->opcode, RSW_TRACE_OPCODES),
		  __entry->tagged, __entry->last, __entry->len,
		  __entry->stag, __entry->to,
		  __entry->qn, __entry->msn, __entry->mo)
);

#define RSW_DEFINE_FPDU_EVENT(name)				\
	DEFINE_EVENT(rsw_fpdu_class, name,			\
		TP_PROTO(u32 qpn, const union rsw_hdr *hdr),	\
		TP_ARGS(qpn, hdr))

/* An FPDU the socket took whole (tx.c rsw_tx_push()). */
RSW_DEFINE_FPDU_EVENT(rsw_fpdu_tx);
/* A DDP segment the parser found whole and valid (stream_rx.c). */
RSW_DEFINE_FPDU_EVENT(rsw_fpdu_rx);

/* A Terminate's cause (RFC 5040 section 4.8): layer, error type, code. */
DECLARE_EVENT_CLASS(rsw_term_class,
	TP_PROTO(u32 qpn, const struct rsw_term_cause *cause),
	TP_ARGS(qpn, cause),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, ecode)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->layer = cause->layer;
		__entry->etype = cause->etype;
		__entry->ecode = cause->ecode;
	),
	TP_printk("qp=%u layer=%s etype=0x%x ecode=0x%02x",
		  __entry->qpn,
		  __print_symbolic(__entry->layer, RSW_TRACE_TERM_LAYERS),
		  __entry->etype, __entry->ecode)
);

#define RSW_DEFINE_TERM_EVENT(name)					\
	DEFINE_EVENT(rsw_term_class, name,				\
		TP_PROTO(u32 qpn, const struct rsw_term_cause *cause),	\
		TP_ARGS(qpn, cause))

/*
 * Ours, handed to the TX engine to go out (stream.c); qp=0: one the CM
 * sent before any QP, answering an MPA Reply that fails negotiation
 * (cm.c rsw_cep_send_term(); its rsw_fpdu_tx shows qp=0 too).
 */
RSW_DEFINE_TERM_EVENT(rsw_term_tx);
/* The peer's, received whole and valid, also after ours (stream_rx.c). */
RSW_DEFINE_TERM_EVENT(rsw_term_rx);

/*
 * A connection endpoint's state change (cm.c): @cep is the CEP[n] of the
 * debug messages; the ports are its connection's (host order), noted when
 * known and kept after the socket has gone (0 until known).
 */
TRACE_EVENT(rsw_cm_state,
	TP_PROTO(u32 cep, u16 lport, u16 rport, unsigned int old,
		 unsigned int new),
	TP_ARGS(cep, lport, rport, old, new),
	TP_STRUCT__entry(
		__field(u32, cep)
		__field(u16, lport)
		__field(u16, rport)
		__field(unsigned int, old)
		__field(unsigned int, new)
	),
	TP_fast_assign(
		__entry->cep = cep;
		__entry->lport = lport;
		__entry->rport = rport;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("cep=%u lport=%u rport=%u %s -> %s",
		  __entry->cep, __entry->lport, __entry->rport,
		  __print_symbolic(__entry->old, RSW_TRACE_CEP_STATES),
		  __print_symbolic(__entry->new, RSW_TRACE_CEP_STATES))
);

/*
 * A QP's RFC 5040 section 6 stream state change (qp.c).  Its creation
 * (idle) is not traced: a QP's history starts at its first change.
 */
TRACE_EVENT(rsw_qp_state,
	TP_PROTO(u32 qpn, unsigned int old, unsigned int new),
	TP_ARGS(qpn, old, new),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(unsigned int, old)
		__field(unsigned int, new)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("qp=%u %s -> %s", __entry->qpn,
		  __print_symbolic(__entry->old, RSW_TRACE_QP_STATES),
		  __print_symbolic(__entry->new, RSW_TRACE_QP_STATES))
);

/*
 * A user QP's doorbell (qp.c): @sq (else the receive queue), and the
 * entries the process's tail shows beyond those the kernel took, as the
 * process wrote it (not yet checked: a bad tail fails the QP at its take).
 */
TRACE_EVENT(rsw_doorbell,
	TP_PROTO(u32 qpn, bool sq, u32 pending),
	TP_ARGS(qpn, sq, pending),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(bool, sq)
		__field(u32, pending)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->sq = sq;
		__entry->pending = pending;
	),
	TP_printk("qp=%u ring=%s pending=%u", __entry->qpn,
		  __print_symbolic(__entry->sq, { 0, "rq" }, { 1, "sq" }),
		  __entry->pending)
);

#undef RSW_EM
#undef RSW_EMe

#endif /* _RDMAP_SW_TRACE_H */

/* Out of tree: trace.c's CFLAGS (Kbuild) put this directory on the path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
