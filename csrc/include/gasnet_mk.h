/* gasnet_mk.h: GASNet-EX memory kinds. This build has host memory only (GEX_MK_HOST, in
 * gasnetex.h): creating a kind for a device fails with GASNET_ERR_RESOURCE and a message naming
 * the class, as GASNet-EX built without accelerator support does. */
#ifndef _INCLUDED_GASNET_MK_H
#define _INCLUDED_GASNET_MK_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GEX_MK_CLASS_HOST,     /* ordinary memory (GEX_MK_HOST) */
  GEX_MK_CLASS_CUDA_UVA, /* CUDA unified virtual addressing */
  GEX_MK_CLASS_HIP,      /* AMD HIP */
  GEX_MK_CLASS_ZE        /* Intel oneAPI Level Zero */
} gex_MK_Class_t;

typedef struct {
  uint64_t gex_flags; /* reserved: 0 */
  gex_MK_Class_t gex_class;
  union {
    struct {
      int gex_CUdevice;
    } gex_class_cuda_uva;
    struct {
      int gex_hipDevice;
    } gex_class_hip;
    struct {
      void *gex_zeDevice, *gex_zeContext, *gex_zeMemoryOrdinal;
    } gex_class_ze;
  } gex_args;
} gex_MK_Create_args_t;

int gex_MK_Create(gex_MK_t *memkind_p, gex_Client_t client, const gex_MK_Create_args_t *args,
                  gex_Flags_t flags);
void gex_MK_Destroy(gex_MK_t memkind, gex_Flags_t flags);

#ifdef __cplusplus
}
#endif

#endif
