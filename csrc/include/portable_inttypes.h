/* portable_inttypes.h: the fixed-width integer types (int8_t..uint64_t, intptr_t, uintptr_t)
 * and their format macros, for GASNet-1 clients that include this header by name. Every
 * platform this implementation builds on has complete C99 headers, so it is just those. */
#ifndef _PORTABLE_INTTYPES_H
#define _PORTABLE_INTTYPES_H
#ifndef _INTTYPES_DEFINED
#define _INTTYPES_DEFINED
#endif

#include <inttypes.h>
#include <stdint.h>
#include <sys/types.h>

#endif
