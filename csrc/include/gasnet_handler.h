/* gasnet_handler.h: GASNet-1's portable AM handler macros, for handlers that carry pointers
 * in their 32-bit arguments. A pointer takes one argument where pointers are 32 bits wide and
 * two (high word first) where they are 64 bits wide, so a handler has two argument counts:
 * cnt32 and cnt64. The macros choose by PLATFORM_ARCH_32 / PLATFORM_ARCH_64:
 *
 *   SHORT_REQ(1, 2, (dest, hidx, PACK(ptr)))           a request with one pointer
 *   void foo_inner(gasnet_token_t token, void *p) {...}
 *   SHORT_HANDLER(foo, 1, 2, (token, UNPACK(a0)), (token, UNPACK2(a0, a1)));
 *   gasnet_handlerentry_t table[] = {gasneti_handler_tableentry_with_bits(foo)};
 *
 * where the client defines the index _hidx_foo. Not included by gasnet.h (as in GASNet). */
#ifndef GASNET_HANDLER_H
#define GASNET_HANDLER_H

#include <gasnet.h>

/* Handler parameter lists and argument names for 0..16 arguments (a leading comma when any). */
#define ARGS0
#define ARGS1 , gasnet_handlerarg_t a0
#define ARGS2 ARGS1, gasnet_handlerarg_t a1
#define ARGS3 ARGS2, gasnet_handlerarg_t a2
#define ARGS4 ARGS3, gasnet_handlerarg_t a3
#define ARGS5 ARGS4, gasnet_handlerarg_t a4
#define ARGS6 ARGS5, gasnet_handlerarg_t a5
#define ARGS7 ARGS6, gasnet_handlerarg_t a6
#define ARGS8 ARGS7, gasnet_handlerarg_t a7
#define ARGS9 ARGS8, gasnet_handlerarg_t a8
#define ARGS10 ARGS9, gasnet_handlerarg_t a9
#define ARGS11 ARGS10, gasnet_handlerarg_t a10
#define ARGS12 ARGS11, gasnet_handlerarg_t a11
#define ARGS13 ARGS12, gasnet_handlerarg_t a12
#define ARGS14 ARGS13, gasnet_handlerarg_t a13
#define ARGS15 ARGS14, gasnet_handlerarg_t a14
#define ARGS16 ARGS15, gasnet_handlerarg_t a15
#define ARGNAMES0
#define ARGNAMES1 , a0
#define ARGNAMES2 ARGNAMES1, a1
#define ARGNAMES3 ARGNAMES2, a2
#define ARGNAMES4 ARGNAMES3, a3
#define ARGNAMES5 ARGNAMES4, a4
#define ARGNAMES6 ARGNAMES5, a5
#define ARGNAMES7 ARGNAMES6, a6
#define ARGNAMES8 ARGNAMES7, a7
#define ARGNAMES9 ARGNAMES8, a8
#define ARGNAMES10 ARGNAMES9, a9
#define ARGNAMES11 ARGNAMES10, a10
#define ARGNAMES12 ARGNAMES11, a11
#define ARGNAMES13 ARGNAMES12, a12
#define ARGNAMES14 ARGNAMES13, a13
#define ARGNAMES15 ARGNAMES14, a14
#define ARGNAMES16 ARGNAMES15, a15

/* How handlers are declared: extern unless the client says otherwise (e.g. static). */
#ifndef GASNETI_HANDLER_SCOPE
#define GASNETI_HANDLER_SCOPE extern
#endif

/* The type of a handler table entry's function (gasnet_handlerentry_t's fnptr). */
typedef void (*gasneti_handler_fn_t)();
#define gasneti_handleridx(fnname) _hidx_##fnname
#define gasneti_handler_tableentry_no_bits(fnname) \
  {gasneti_handleridx(fnname), (gasneti_handler_fn_t)(fnname)}

#if PLATFORM_ARCH_32
/* One argument per pointer. */
#define PACK(ptr) ((gasnet_handlerarg_t)(uintptr_t)(ptr))
#define UNPACK(a0) ((void *)(uintptr_t)(a0))
#define GASNETI_HANDLER_PICK(cnt32, cnt64) cnt32
#define GASNETI_HANDLER_BITS(fnname) fnname##_32
#else
/* Two arguments per pointer, high word first; UNPACK2 masks the low word, which arrives
 * sign-extended. */
#define PACK(ptr) \
  ((gasnet_handlerarg_t)GASNETI_HIWORD(ptr)), ((gasnet_handlerarg_t)GASNETI_LOWORD(ptr))
#define UNPACK2(a0, a1) ((void *)(uintptr_t)GASNETI_MAKEWORD(a0, a1))
#define GASNETI_HANDLER_PICK(cnt32, cnt64) cnt64
#define GASNETI_HANDLER_BITS(fnname) fnname##_64
#endif
#define GASNETI_HANDLER_CAT_(a, b) a##b
#define GASNETI_HANDLER_CAT(a, b) GASNETI_HANDLER_CAT_(a, b)

#define gasneti_handler_tableentry_with_bits(fnname) \
  {gasneti_handleridx(fnname), (gasneti_handler_fn_t)GASNETI_HANDLER_BITS(fnname)}

/* Requests and replies: args is the parenthesised argument list (PACK expands in it to the
 * argument count of this platform), sent with the numbered form of that count. */
#define GASNETI_HANDLER_SEND(family, cnt32, cnt64, args) \
  GASNETI_HANDLER_CAT(family, GASNETI_HANDLER_PICK(cnt32, cnt64)) args
#define SHORT_REQ(cnt32, cnt64, args) GASNETI_HANDLER_SEND(gasnet_AMRequestShort, cnt32, cnt64, args)
#define SHORT_REP(cnt32, cnt64, args) GASNETI_HANDLER_SEND(gasnet_AMReplyShort, cnt32, cnt64, args)
#define MEDIUM_REQ(cnt32, cnt64, args) GASNETI_HANDLER_SEND(gasnet_AMRequestMedium, cnt32, cnt64, args)
#define MEDIUM_REP(cnt32, cnt64, args) GASNETI_HANDLER_SEND(gasnet_AMReplyMedium, cnt32, cnt64, args)
#define LONG_REQ(cnt32, cnt64, args) GASNETI_HANDLER_SEND(gasnet_AMRequestLong, cnt32, cnt64, args)
#define LONG_REP(cnt32, cnt64, args) GASNETI_HANDLER_SEND(gasnet_AMReplyLong, cnt32, cnt64, args)
#define LONGASYNC_REQ(cnt32, cnt64, args) \
  GASNETI_HANDLER_SEND(gasnet_AMRequestLongAsync, cnt32, cnt64, args)

/* Handlers: NAME_32 or NAME_64 takes this platform's arguments and calls NAME_inner with
 * innerargs32 or innerargs64 (which UNPACK the pointers). The trailing declaration takes the
 * semicolon the client writes after the macro. */
#define GASNETI_HANDLER_END(name) extern void gasneti_handler_defined_##name(void)
#define SHORT_HANDLER_DECL(name, cnt32, cnt64) \
  GASNETI_HANDLER_SCOPE void GASNETI_HANDLER_BITS(name)( \
      gasnet_token_t token GASNETI_HANDLER_CAT(ARGS, GASNETI_HANDLER_PICK(cnt32, cnt64)))
#define MEDIUM_HANDLER_DECL(name, cnt32, cnt64) \
  GASNETI_HANDLER_SCOPE void GASNETI_HANDLER_BITS(name)( \
      gasnet_token_t token, void *addr, size_t nbytes \
      GASNETI_HANDLER_CAT(ARGS, GASNETI_HANDLER_PICK(cnt32, cnt64)))
#define LONG_HANDLER_DECL MEDIUM_HANDLER_DECL
#define SHORT_HANDLER(name, cnt32, cnt64, innerargs32, innerargs64) \
  SHORT_HANDLER_DECL(name, cnt32, cnt64);                             \
  SHORT_HANDLER_DECL(name, cnt32, cnt64) {                            \
    name##_inner GASNETI_HANDLER_PICK(innerargs32, innerargs64);      \
  }                                                                   \
  GASNETI_HANDLER_END(name)
#define MEDIUM_HANDLER(name, cnt32, cnt64, innerargs32, innerargs64) \
  MEDIUM_HANDLER_DECL(name, cnt32, cnt64);                             \
  MEDIUM_HANDLER_DECL(name, cnt32, cnt64) {                            \
    name##_inner GASNETI_HANDLER_PICK(innerargs32, innerargs64);       \
  }                                                                    \
  GASNETI_HANDLER_END(name)
#define LONG_HANDLER MEDIUM_HANDLER

/* Handlers without pointers: one name, one count. */
#define SHORT_HANDLER_NOBITS_DECL(name, cnt) \
  GASNETI_HANDLER_SCOPE void name(gasnet_token_t token ARGS##cnt)
#define MEDIUM_HANDLER_NOBITS_DECL(name, cnt) \
  GASNETI_HANDLER_SCOPE void name(gasnet_token_t token, void *addr, size_t nbytes ARGS##cnt)
#define LONG_HANDLER_NOBITS_DECL MEDIUM_HANDLER_NOBITS_DECL

#endif
