// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: the table of RDMAP opcodes (see opcode.h).  Data only: a
 * constant, so no lock and no lifetime.
 */
#include "internal.h"

#define RSW_ROW_TAGGED(op, nm, deliver_fn, stat)			\
	[op] = { .name = nm, .hdr_len = sizeof(struct rsw_ddp_tagged),	\
		 .tagged = true, .payload = true,			\
		 .tx_stat = RSW_STAT_TX_##stat,				\
		 .rx_stat = RSW_STAT_RX_##stat,				\
		 .rx_check = rsw_rx_check_tagged,			\
		 .deliver = deliver_fn, .tx_hdr = rsw_tx_hdr_tagged }

#define RSW_ROW_SEND(op, nm, inv, se)					\
	[op] = { .name = nm, .hdr_len = sizeof(struct rsw_ddp_untagged), \
		 .qn = RSW_QN_SEND, .payload = true, .consumes_rq = true, \
		 .inval = inv, .solicited = se,				\
		 .tx_stat = RSW_STAT_TX_SENDS,				\
		 .rx_stat = RSW_STAT_RX_SENDS,				\
		 .rx_check = rsw_rx_check_untagged,			\
		 .deliver = rsw_stream_deliver_send,			\
		 .tx_hdr = rsw_tx_hdr_send }

#define RSW_ROW_IMM(op, nm, se)						\
	[op] = { .name = nm, .hdr_len = sizeof(struct rsw_hdr_imm),	\
		 .qn = RSW_QN_SEND, .consumes_rq = true, .solicited = se, \
		 .tx_stat = RSW_STAT_TX_IMMS, .rx_stat = RSW_STAT_RX_IMMS, \
		 .rx_check = rsw_rx_check_untagged,			\
		 .deliver = rsw_stream_deliver_imm,			\
		 .tx_hdr = rsw_tx_hdr_imm }

const struct rsw_rdmap_op rsw_rdmap_ops[RSW_OP_NUM] = {
	RSW_ROW_TAGGED(RSW_OP_WRITE, "WRITE", rsw_stream_deliver_write,
		       WRITES),
	[RSW_OP_READ_REQ] = {
		.name = "READ_REQ", .hdr_len = sizeof(struct rsw_hdr_rreq),
		.qn = RSW_QN_READ_REQ,
		.rx_check = rsw_rx_check_rreq,
		.deliver = rsw_stream_deliver_rreq,
		.tx_hdr = rsw_tx_hdr_rreq,
		.tx_stat = RSW_STAT_TX_READ_REQS,
		.rx_stat = RSW_STAT_RX_READ_REQS,
	},
	RSW_ROW_TAGGED(RSW_OP_READ_RESP, "READ_RESP",
		       rsw_stream_deliver_rresp, READ_RESPS),
	RSW_ROW_SEND(RSW_OP_SEND, "SEND", false, false),
	RSW_ROW_SEND(RSW_OP_SEND_INV, "SEND_INV", true, false),
	RSW_ROW_SEND(RSW_OP_SEND_SE, "SEND_SE", false, true),
	RSW_ROW_SEND(RSW_OP_SEND_SE_INV, "SEND_SE_INV", true, true),
	[RSW_OP_TERMINATE] = {
		.name = "TERMINATE", .hdr_len = sizeof(struct rsw_hdr_term),
		.qn = RSW_QN_TERMINATE,
		.rx_check = rsw_rx_check_term,
		.deliver = rsw_stream_deliver_term,
		.tx_hdr = rsw_tx_hdr_term,
		.tx_stat = RSW_STAT_TX_TERMS,
		.rx_stat = RSW_STAT_RX_TERMS,
	},
	/*
	 * RFC 7306.  Immediate Data's eight octets are a fixed header: a
	 * ULPDU with anything after them is too long for its buffer of
	 * length 0 (section 6.3: exactly 8 bytes).
	 */
	RSW_ROW_IMM(RSW_OP_IMM_DATA, "IMM_DATA", false),
	RSW_ROW_IMM(RSW_OP_IMM_DATA_SE, "IMM_DATA_SE", true),
	[RSW_OP_ATOMIC_REQ] = {
		.name = "ATOMIC_REQ",
		.hdr_len = sizeof(struct rsw_hdr_atomic_req),
		.qn = RSW_QN_READ_REQ,
		.rx_check = rsw_rx_check_atomic_req,
		.deliver = rsw_stream_deliver_atomic_req,
		.tx_hdr = rsw_tx_hdr_atomic_req,
		.tx_stat = RSW_STAT_TX_ATOMIC_REQS,
		.rx_stat = RSW_STAT_RX_ATOMIC_REQS,
	},
	[RSW_OP_ATOMIC_RESP] = {
		.name = "ATOMIC_RESP",
		.hdr_len = sizeof(struct rsw_hdr_atomic_resp),
		.qn = RSW_QN_ATOMIC_RESP,
		.rx_check = rsw_rx_check_untagged,
		.deliver = rsw_stream_deliver_atomic_resp,
		.tx_hdr = rsw_tx_hdr_atomic_resp,
		.tx_stat = RSW_STAT_TX_ATOMIC_RESPS,
		.rx_stat = RSW_STAT_RX_ATOMIC_RESPS,
	},
};
EXPORT_SYMBOL_IF_KUNIT(rsw_rdmap_ops);
