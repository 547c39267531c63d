/* gasnet_portable.h: the small portability helpers GASNet-1's headers give every client of
 * gasnet.h (stringify and concatenation, C++ linkage brackets, branch hints, inlining
 * attributes, platform identification). Included by gasnet.h; not for direct inclusion. Each
 * is defined only when the client has not defined it already. */
#ifndef GASNET_PORTABLE_H
#define GASNET_PORTABLE_H

#ifndef _STRINGIFY
#define _STRINGIFY_HELPER(x) #x
#define _STRINGIFY(x) _STRINGIFY_HELPER(x)
#endif
#ifndef _CONCAT
#define _CONCAT_HELPER(a, b) a##b
#define _CONCAT(a, b) _CONCAT_HELPER(a, b)
#endif
#ifndef BEGIN_EXTERNC
#ifdef __cplusplus
#define BEGIN_EXTERNC extern "C" {
#define END_EXTERNC }
#else
#define BEGIN_EXTERNC
#define END_EXTERNC
#endif
#endif

/* GASNet's own spelling of the C++ linkage brackets (test harnesses wrap their helpers in
 * them), and of a declaration with C linkage. */
#ifdef __cplusplus
#define GASNETT_BEGIN_EXTERNC extern "C" {
#define GASNETT_END_EXTERNC }
#define GASNETT_EXTERNC extern "C"
#else
#define GASNETT_BEGIN_EXTERNC
#define GASNETT_END_EXTERNC
#define GASNETT_EXTERNC extern
#endif

/* Branch hints: the expression's value is returned unchanged. */
#define GASNETT_PREDICT_TRUE(e) __builtin_expect(!!(e), 1)
#define GASNETT_PREDICT_FALSE(e) __builtin_expect(!!(e), 0)
#define GASNETT_LIKELY(e) GASNETT_PREDICT_TRUE(e)
#define GASNETT_UNLIKELY(e) GASNETT_PREDICT_FALSE(e)

/* Function attributes, written as GASNet's are: GASNETT_INLINE(fn) static ... fn(...). */
#define GASNETT_INLINE(fn) static inline __attribute__((always_inline))
#define GASNETT_NEVER_INLINE(fn, declarator) __attribute__((noinline)) declarator
#define GASNETT_NORETURN __attribute__((noreturn))
#define GASNETT_UNUSED __attribute__((unused))
#define GASNETT_RESTRICT __restrict__
#define GASNETT_CURRENT_FUNCTION __func__
#define GASNETT_IDENT(id, str) \
  static const char id[] __attribute__((used)) = str
/* Attributes as GASNet spells them. The ...P(fn) forms are the pragma spelling some compilers
 * need after a declaration; GCC and Clang take the attribute itself, so they are empty.
 * GASNETT_FORMAT_PRINTF(fn, fmtarg, firstvararg, declarator) wraps the declarator. */
#define GASNETT_NORETURNP(fnname)
#define GASNETT_MALLOC __attribute__((__malloc__)) __attribute__((__warn_unused_result__))
#define GASNETT_MALLOCP(fnname)
#define GASNETT_PURE __attribute__((__pure__))
#define GASNETT_PUREP(fnname)
#define GASNETT_CONST __attribute__((__const__))
#define GASNETT_CONSTP(fnname)
#define GASNETT_USED __attribute__((__used__))
#define GASNETT_WARN_UNUSED_RESULT __attribute__((__warn_unused_result__))
#define GASNETT_HOT __attribute__((__hot__))
#define GASNETT_COLD __attribute__((__cold__))
#define GASNETT_DEPRECATED __attribute__((__deprecated__))
#define GASNETT_PLEASE_INLINE(fn) static inline
#define GASNETT_FORMAT_PRINTF(fnname, fmtarg, firstvararg, declarator) \
  __attribute__((__format__(__printf__, fmtarg, firstvararg))) declarator
#define GASNETT_FORMAT_PRINTF_FUNCPTR(fnname, fmtarg, firstvararg, declarator) \
  __attribute__((__format__(__printf__, fmtarg, firstvararg))) declarator
#define gasnett_constant_p(expr) __builtin_constant_p(expr)

/* A 64-bit word as two 32-bit halves and back (handler arguments are 32 bits: a pointer or a
 * 64-bit value travels as its high and low words). The low word arrives sign-extended, so
 * MAKEWORD masks it. */
#define GASNETI_HIWORD(arg) ((uint32_t)(((uint64_t)(arg)) >> 32))
#define GASNETI_LOWORD(arg) ((uint32_t)((uint64_t)(arg)))
#define GASNETI_MAKEWORD(hi, lo) \
  ((((uint64_t)(uint32_t)(hi)) << 32) | (((uint64_t)(lo)) & 0xFFFFFFFFu))

/* Platform identification (what this implementation is built for: Linux with GCC or Clang). */
#if defined(__linux__) && !defined(PLATFORM_OS_LINUX)
#define PLATFORM_OS_LINUX 1
#endif
#if defined(__x86_64__) && !defined(PLATFORM_ARCH_X86_64)
#define PLATFORM_ARCH_X86_64 1
#elif defined(__aarch64__) && !defined(PLATFORM_ARCH_AARCH64)
#define PLATFORM_ARCH_AARCH64 1
#elif defined(__powerpc64__) && !defined(PLATFORM_ARCH_POWERPC)
#define PLATFORM_ARCH_POWERPC 1
#endif
#if !defined(PLATFORM_ARCH_64) && !defined(PLATFORM_ARCH_32)
#if __SIZEOF_POINTER__ == 8
#define PLATFORM_ARCH_64 1
#else
#define PLATFORM_ARCH_32 1
#endif
#endif
#if !defined(PLATFORM_ARCH_LITTLE_ENDIAN) && !defined(PLATFORM_ARCH_BIG_ENDIAN)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PLATFORM_ARCH_LITTLE_ENDIAN 1
#else
#define PLATFORM_ARCH_BIG_ENDIAN 1
#endif
#endif
#if defined(__clang__) && !defined(PLATFORM_COMPILER_CLANG)
#define PLATFORM_COMPILER_CLANG 1
#elif defined(__GNUC__) && !defined(__clang__) && !defined(PLATFORM_COMPILER_GNU)
#define PLATFORM_COMPILER_GNU 1
#endif
/* The compiler's family (an unquoted token clients stringify), a number for it, and its
 * version: major << 16 | minor << 8 | patch, compared with _VERSION_GE/LT/EQ(maj, min, pat). */
#ifndef PLATFORM_COMPILER_FAMILYNAME
#if defined(__clang__)
#define PLATFORM_COMPILER_FAMILYNAME CLANG
#define PLATFORM_COMPILER_FAMILYID 17
#define PLATFORM_COMPILER_VERSION \
  ((__clang_major__ << 16) | (__clang_minor__ << 8) | __clang_patchlevel__)
#define PLATFORM_COMPILER_VERSION_STR __clang_version__
#else
#define PLATFORM_COMPILER_FAMILYNAME GNU
#define PLATFORM_COMPILER_FAMILYID 1
#define PLATFORM_COMPILER_VERSION \
  ((__GNUC__ << 16) | (__GNUC_MINOR__ << 8) | __GNUC_PATCHLEVEL__)
#define PLATFORM_COMPILER_VERSION_STR __VERSION__
#endif
#ifdef __cplusplus
#define PLATFORM_COMPILER_ID (10000 + PLATFORM_COMPILER_FAMILYID)
#else
#define PLATFORM_COMPILER_ID PLATFORM_COMPILER_FAMILYID
#endif
#define PLATFORM_COMPILER_VERSION_INT_(maj, min, pat) (((maj) << 16) | ((min) << 8) | (pat))
#define PLATFORM_COMPILER_VERSION_GE(maj, min, pat) \
  (PLATFORM_COMPILER_VERSION >= PLATFORM_COMPILER_VERSION_INT_(maj, min, pat))
#define PLATFORM_COMPILER_VERSION_LT(maj, min, pat) \
  (PLATFORM_COMPILER_VERSION < PLATFORM_COMPILER_VERSION_INT_(maj, min, pat))
#define PLATFORM_COMPILER_VERSION_EQ(maj, min, pat) \
  (PLATFORM_COMPILER_VERSION == PLATFORM_COMPILER_VERSION_INT_(maj, min, pat))
#define PLATFORM_COMPILER_IDSTR \
  "|COMPILER_FAMILY:" _STRINGIFY(PLATFORM_COMPILER_FAMILYNAME) "|COMPILER_VERSION:" \
  PLATFORM_COMPILER_VERSION_STR "|"
#endif

#endif
