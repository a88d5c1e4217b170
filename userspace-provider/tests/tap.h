/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The provider's test programs print one TAP-style line per check and
 * exit non-zero if any failed: check() counts, prints and returns @ok.
 */
#ifndef RSW_TESTS_TAP_H
#define RSW_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int checks, failures;

static bool check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s %d - ", ok ? "ok" : "not ok", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	/* Lines must reach a log before a crash or a hang cuts it short. */
	fflush(stdout);
	return ok;
}

#endif /* RSW_TESTS_TAP_H */
