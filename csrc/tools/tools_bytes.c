/* tools_bytes.c: counting zero bytes (gasnett_count0s: clients measure how compressible their
 * data is) and what a build of the library costs in speed (gasnett_performance_warning_str). */
#include "tools_internal.h"

size_t gasnett_count0s(const void *src, size_t len) {
  const unsigned char *p = src;
  size_t zeros = 0;
  for (size_t i = 0; i < len; i++) zeros += p[i] == 0;
  return zeros;
}

size_t gasnett_count0s_copy(void *GASNETT_RESTRICT dst, const void *GASNETT_RESTRICT src,
                            size_t len) {
  memcpy(dst, src, len);
  return gasnett_count0s(dst, len);
}

const char *gasnett_performance_warning_str(void) {
#ifdef GASNETI_DEBUG
  return "        debugging (GASNETI_DEBUG: argument checks on every call)\n"
         "        AddressSanitizer and UndefinedBehaviorSanitizer\n";
#else
  return "";
#endif
}
