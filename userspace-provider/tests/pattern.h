/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Test data for the connected test programs: byte @k of message @seed is
 * pat(@seed, @k), not periodic at any SGE size, so a byte moved, lost or
 * doubled anywhere in a message shows.
 */
#ifndef RSW_TESTS_PATTERN_H
#define RSW_TESTS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* Byte @k of a message made with @seed: not periodic at any SGE size. */
static inline uint8_t pat(int seed, size_t k)
{
	return (uint8_t)(k * 131 + (k >> 8) * 7 + seed * 29 + 1);
}

static inline void fill(void *p, size_t len, int seed, size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		((uint8_t *)p)[i] = pat(seed, from + i);
}

/* Index of the first byte of @p that is not pattern @seed, or -1. */
static inline long mismatch(const void *p, size_t len, int seed, size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((const uint8_t *)p)[i] != pat(seed, from + i))
			return (long)i;
	return -1;
}

static inline long not_byte(const void *p, size_t len, uint8_t b)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((const uint8_t *)p)[i] != b)
			return (long)i;
	return -1;
}

#endif /* RSW_TESTS_PATTERN_H */
