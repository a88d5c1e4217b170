// SPDX-License-Identifier: GPL-2.0
/* rdmap_sw: the one place the tracepoints of trace.h are defined. */
#include "internal.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
