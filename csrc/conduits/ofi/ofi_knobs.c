/* ofi_knobs.c: the ofi conduit's rows of the knob table (the build collects them with the
 * core's and every other conduit's into the one table). */
#include "knob_api.h"

#define BIG 9.0e18
#define J GASNETI_SCOPE_JOB
#define R GASNETI_SCOPE_RANK

static const gasneti_knob_t rows[] = {
    {"GASNET_OFI_PROVIDER", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "ofi",
     "ofi: the libfabric provider, as fi_info names it (e.g. tcp;ofi_rxm, udp;ofi_rxd, shm, "
     "verbs;ofi_rxm, cxi, efa); default: the first of rank 0's providers that every rank has "
     "(libfabric's own FI_PROVIDER narrows them too).", GASNETI_NOT_TUNED},
    {"GASNET_OFI_DEVICE", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", R, "ofi",
     "ofi: the provider's domain to use (an interface such as eth0, or a NIC such as cxi0); "
     "default: its first one, not loopback when the job spans hosts.", GASNETI_NOT_TUNED},
    {"GASNET_OFI_DEVICE_<n>", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", R, "ofi",
     "ofi: GASNET_OFI_DEVICE for ranks bound to socket n (gasnetrun sets it from each host's "
     "topology: the NIC nearest each socket).", GASNETI_NOT_TUNED},
    {"GASNET_OFI_RECV_BUFFERS", GASNETI_KNOB_INT, "64", 4, 4096, NULL, "buffers", J, "ofi",
     "ofi: receives each rank keeps posted, each of the largest message (64 KiB and its "
     "header), posted again once its message was handled; messages beyond them wait in the "
     "provider.", GASNETI_TUNED("16,32,64,128,256", NULL)},
    {"GASNET_OFI_INJECT_LIMIT", GASNETI_KNOB_SIZE, "", 0, 4096, NULL, "bytes", J, "ofi",
     "ofi: messages and puts up to this size go by fi_inject (the provider copies them at "
     "once); default and upper bound: the provider's inject size (at most 4096). The default "
     "stays: gasnet-tune's 1024 came in one sampled point, not measured alone "
     "(docs/knob-defaults.md).",
     GASNETI_TUNED("0,64,256,1024,4096", NULL)},
    {"GASNET_OFI_NUM_BBUFS", GASNETI_KNOB_INT, "64", 4, 65536, NULL, "buffers", J, "ofi",
     "ofi: send and bounce buffers per rank, each the size of the largest message (gasnet-tune "
     "keeps 64).",
     GASNETI_TUNED("16,32,64,128,256", NULL)},
    {"GASNET_OFI_BBUF_THRESHOLD", GASNETI_KNOB_SIZE, "64K", 0, 1073741824, NULL, "bytes", J,
     "ofi", "ofi: non-bulk puts up to this size are copied into bounce buffers and return at "
     "once; larger ones wait until the provider is done with their source. The default stays: "
     "gasnet-tune's 4K came in one sampled point, not measured alone (docs/knob-defaults.md).",
     GASNETI_TUNED("0,4K,16K,64K,256K", NULL)},
    {"GASNET_OFI_CQ_SIZE", GASNETI_KNOB_INT, "4096", 64, 1048576, NULL, "entries", J, "ofi",
     "ofi: entries of each rank's completion queue.", GASNETI_NOT_TUNED},
    {"GASNET_OFI_VERBOSE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "ofi",
     "ofi: each rank says which provider and domain it uses and what they offer (RMA, "
     "registration mode, ordering, inject size) on stderr.", GASNETI_NOT_TUNED},
};

const gasneti_knob_group_t gasnetc_ofi_knobs = {"ofi", rows, sizeof rows / sizeof rows[0]};
