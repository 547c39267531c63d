/* smp_am.c: the smp conduit's path to ranks outside the caller's supernode (only when
 * GASNET_SUPERNODE_MAXSIZE splits a host): messages only, no cross-mapped segments. */
#include "../../core/conduit.h"
#include "../../core/pshm/pshm.h"

void gasnetc_am_send(gasnet_node_t dest, int reply, int category, gasnet_handler_t handler,
                     const void *src, size_t nbytes, void *dst, int nargs,
                     const gasnet_handlerarg_t *args) {
  int peer = gasneti_host_local[dest];
  gasneti_msg_t msg = {.handler = handler,
                       .flags = (uint8_t)category,
                       .nargs = (uint8_t)nargs,
                       .args = args,
                       .nbytes = (uint32_t)nbytes};
  if (category != GASNETI_AM_LONG) {
    msg.payload = src;
    msg.chunk = category == GASNETI_AM_MEDIUM ? (uint32_t)nbytes : 0;
    gasneti_pshm_send(peer, reply, &msg);
    return;
  }
  /* The segment is not mapped here: the payload travels in Medium-sized chunks that the
   * receiver copies in order; the last chunk rides with the header, so the data is in place
   * before the handler runs. */
  const uint8_t *from = src;
  size_t off = 0;
  while (nbytes - off > GASNETC_MAX_MEDIUM) {
    gasneti_msg_t frag = {.flags = GASNETI_AM_LONG | GASNETI_MSG_LONGFRAG,
                          .payload = from + off,
                          .chunk = GASNETC_MAX_MEDIUM,
                          .addr = (uint64_t)(uintptr_t)dst + off};
    gasneti_pshm_send(peer, reply, &frag);
    off += GASNETC_MAX_MEDIUM;
  }
  msg.addr = (uint64_t)(uintptr_t)dst;
  msg.chunk = (uint32_t)(nbytes - off);
  msg.payload = from + off;
  if (msg.chunk) msg.flags |= GASNETI_MSG_LONGCOPY;
  gasneti_pshm_send(peer, reply, &msg);
}

/* Every peer of an smp job shares this host's rings, which gasneti_pshm_poll serves. */
int gasnetc_poll(int which) {
  (void)which;
  return 0;
}
