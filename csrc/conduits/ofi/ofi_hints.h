/* ofi_hints.h: what the ofi conduit asks of libfabric, shared by the conduit and by
 * gasnet-ofi-probe (so that --probe lists exactly what a rank could open): reliable datagram
 * endpoints with messages into posted receives, RMA where the provider has it; contexts
 * the provider may keep in the conduit's records; registration modes the conduit handles (not
 * FI_MR_LOCAL, registered local buffers). */
#ifndef GASNETC_OFI_HINTS_H
#define GASNETC_OFI_HINTS_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#define OFI_API FI_VERSION(1, 9)
#define OFI_CAPS_AM FI_MSG
#define OFI_MR_MODES (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)

static inline void ofi_fill_hints(struct fi_info *h, uint64_t caps) {
  h->ep_attr->type = FI_EP_RDM;
  h->caps = caps;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->domain_attr->mr_mode = (int)OFI_MR_MODES;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
}

#endif
