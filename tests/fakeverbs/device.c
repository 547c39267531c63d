/* device.c: fake HCAs read from a sysfs-shaped directory (FAKEVERBS_SYSFS), so that the same
 * recorded node serves gasnetrun's probe and the provider: class/infiniband/<dev>/node_guid,
 * fw_ver, ports/<n>/state and link_layer; device limits from an `ibv_devinfo -v` record
 * beside that tree (<node>/ibv_devinfo-v.txt for FAKEVERBS_SYSFS=<node>/sys), where present.
 * Devices, contexts and the queries. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

static fv_device_t devices[FV_MAX_DEVICES];
static int ndevices = -1;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

const char *fv_sysfs_root(void) {
  const char *root = getenv("FAKEVERBS_SYSFS");
  return root && *root ? root : NULL;
}

static bool read_text(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, len - 1, f);
  fclose(f);
  buf[n] = 0;
  while (n && isspace((unsigned char)buf[n - 1])) buf[--n] = 0;
  return true;
}

/* Copies a string, cut to fit (firmware names and record values are short in practice). */
static void set_str(char *dst, size_t size, const char *src) {
  size_t n = strnlen(src, size - 1);
  memmove(dst, src, n);
  dst[n] = 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Limits a ConnectX-class HCA reports; an ibv_devinfo -v record overrides them. */
static void default_attr(struct ibv_device_attr *a) {
  *a = (struct ibv_device_attr){
      .max_mr_size = UINT64_MAX, .page_size_cap = 0xfffff000, .vendor_id = 0x02c9,
      .vendor_part_id = 4123, .hw_ver = 0, .max_qp = 131072, .max_qp_wr = 32768,
      .device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
                          IBV_DEVICE_PORT_ACTIVE_EVENT,
      .max_sge = FV_MAX_SGE, .max_sge_rd = FV_MAX_SGE, .max_cq = 16777216,
      .max_cqe = 4194303, .max_mr = 16777216, .max_pd = 8388608, .max_qp_rd_atom = 16,
      .max_ee_rd_atom = 0, .max_res_rd_atom = 2097152, .max_qp_init_rd_atom = 16,
      .atomic_cap = IBV_ATOMIC_NONE, .max_srq = 8388608, .max_srq_wr = 32767,
      .max_srq_sge = FV_MAX_SGE, .max_pkeys = 128, .local_ca_ack_delay = 16,
      .phys_port_cnt = 1};
}

/* "key: value" lines of one hca_id block of an ibv_devinfo -v record. */
static void apply_devinfo(fv_device_t *d, const char *root) {
  char path[4096], line[512];
  snprintf(path, sizeof path, "%s/../ibv_devinfo-v.txt", root); /* beside the sysfs tree */
  FILE *f = fopen(path, "r");
  if (!f) return;
  bool mine = false;
  struct ibv_device_attr *a = &d->attr;
  while (fgets(line, sizeof line, f)) {
    char key[64];
    char value[256];
    if (sscanf(line, " %63[^:]: %255s", key, value) != 2) continue;
    if (!strcmp(key, "hca_id")) {
      mine = !strcmp(value, d->dev.name);
      continue;
    }
    if (!mine) continue;
    unsigned long long v = strtoull(value, NULL, 0);
#define SET(name) else if (!strcmp(key, #name)) a->name = (__typeof__(a->name))v
    if (!strcmp(key, "fw_ver")) set_str(d->fw_ver, sizeof d->fw_ver, value);
    SET(max_mr_size); SET(max_qp); SET(max_qp_wr); SET(max_sge); SET(max_cq); SET(max_cqe);
    SET(max_mr); SET(max_pd); SET(max_qp_rd_atom); SET(max_qp_init_rd_atom); SET(max_srq);
    SET(max_srq_wr); SET(max_srq_sge); SET(vendor_part_id); SET(vendor_id);
#undef SET
  }
  fclose(f);
  if (a->max_sge > FV_MAX_SGE) a->max_sge = FV_MAX_SGE;
  if (a->max_srq_sge > FV_MAX_SGE) a->max_srq_sge = FV_MAX_SGE;
}

static void load_device(fv_device_t *d, const char *root, const char *name, int index) {
  char path[4096], text[256];
  memset(d, 0, sizeof *d);
  d->index = index;
  snprintf(d->dev.name, sizeof d->dev.name, "%s", name);
  snprintf(d->dev.dev_name, sizeof d->dev.dev_name, "uverbs%d", index);
  snprintf(d->dev.ibdev_path, sizeof d->dev.ibdev_path, "%s/class/infiniband/%s", root, name);
  snprintf(d->dev.dev_path, sizeof d->dev.dev_path, "%s/class/infiniband_verbs/uverbs%d", root,
           index);
  d->dev.node_type = IBV_NODE_CA;
  d->dev.transport_type = IBV_TRANSPORT_IB;
  default_attr(&d->attr);
  snprintf(d->fw_ver, sizeof d->fw_ver, "0.0.0");
  snprintf(path, sizeof path, "%s/fw_ver", d->dev.ibdev_path);
  if (read_text(path, text, sizeof text)) set_str(d->fw_ver, sizeof d->fw_ver, text);
  snprintf(path, sizeof path, "%s/node_guid", d->dev.ibdev_path);
  if (read_text(path, text, sizeof text)) {
    uint64_t g = 0;
    for (const char *p = text; *p; p++)
      if (isxdigit((unsigned char)*p)) g = g << 4 | (uint64_t)(isdigit((unsigned char)*p)
                                                             ? *p - '0'
                                                             : tolower((unsigned char)*p) - 'a' + 10);
    d->guid = g;
  }
  for (int p = 1; p <= FV_MAX_PORTS; p++) {
    snprintf(path, sizeof path, "%s/ports/%d/state", d->dev.ibdev_path, p);
    if (!read_text(path, text, sizeof text)) break;
    d->nports = p;
    d->port_state[p - 1] = strstr(text, "ACTIVE") ? 'A' : strstr(text, "INIT") ? 'I' : 'D';
    snprintf(path, sizeof path, "%s/ports/%d/link_layer", d->dev.ibdev_path, p);
    d->link_layer[p - 1] =
        read_text(path, text, sizeof text) && !strcmp(text, "Ethernet") ? 'E' : 'I';
  }
  d->attr.phys_port_cnt = (uint8_t)d->nports;
  d->attr.node_guid = __builtin_bswap64(d->guid); /* verbs keep GUIDs in network order */
  d->attr.sys_image_guid = d->attr.node_guid;
  set_str(d->attr.fw_ver, sizeof d->attr.fw_ver, d->fw_ver);
  apply_devinfo(d, root);
  set_str(d->attr.fw_ver, sizeof d->attr.fw_ver, d->fw_ver);
}

int fv_devices(fv_device_t **out) {
  pthread_mutex_lock(&devices_lock);
  if (ndevices < 0) {
    ndevices = 0;
    const char *root = fv_sysfs_root();
    char path[4096];
    DIR *dir = NULL;
    if (root) {
      snprintf(path, sizeof path, "%s/class/infiniband", root);
      dir = opendir(path);
    }
    if (dir) {
      char *names[FV_MAX_DEVICES];
      int n = 0;
      struct dirent *e;
      while ((e = readdir(dir)) && n < FV_MAX_DEVICES)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
      closedir(dir);
      qsort(names, (size_t)n, sizeof names[0], by_name);
      for (int i = 0; i < n; i++) {
        if (names[i]) load_device(&devices[ndevices], root, names[i], ndevices), ndevices++;
        free(names[i]);
      }
    }
  }
  *out = devices;
  int n = ndevices;
  pthread_mutex_unlock(&devices_lock);
  return n;
}

/* ---- the device list ----------------------------------------------------------------------- */
struct ibv_device **ibv_get_device_list(int *num_devices) {
  fv_device_t *devs;
  int n = fv_devices(&devs);
  struct ibv_device **list = calloc((size_t)n + 1, sizeof *list);
  if (!list) {
    errno = ENOMEM;
    return NULL;
  }
  for (int i = 0; i < n; i++) list[i] = &devs[i].dev;
  if (num_devices) *num_devices = n;
  return list;
}

void ibv_free_device_list(struct ibv_device **list) { free(list); }

const char *ibv_get_device_name(struct ibv_device *device) { return device->name; }

int ibv_get_device_index(struct ibv_device *device) { return ((fv_device_t *)device)->index; }

__be64 ibv_get_device_guid(struct ibv_device *device) {
  return (__be64)__builtin_bswap64(((fv_device_t *)device)->guid);
}

int ibv_fork_init(void) { return 0; }

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, size ? size - 1 : 0, f);
  fclose(f);
  if (size) buf[n] = 0;
  if (n && buf[n - 1] == '\n') buf[--n] = 0;
  return (int)n;
}

/* ---- contexts ------------------------------------------------------------------------------- */
struct ibv_context *ibv_open_device(struct ibv_device *device) {
  fv_fabric_attach();
  fv_context_t *c = calloc(1, sizeof *c);
  if (!c) {
    errno = ENOMEM;
    return NULL;
  }
  c->fdev = (fv_device_t *)device;
  c->ctx.device = device;
  c->ctx.ops = fv_ops;
  c->ctx.cmd_fd = -1;
  c->ctx.async_fd = -1;
  c->ctx.num_comp_vectors = 1;
  pthread_mutex_init(&c->ctx.mutex, NULL);
  pthread_mutex_init(&c->lock, NULL);
  for (int p = 1; p <= c->fdev->nports; p++)
    if (c->fdev->port_state[p - 1] == 'A') c->lid[p] = fv_port_lid(device->name, p);
  return &c->ctx;
}

int ibv_close_device(struct ibv_context *context) {
  fv_context_t *c = (fv_context_t *)context;
  if (c->qps) return EBUSY;
  free(c);
  return 0;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr) {
  *attr = ((fv_context_t *)context)->fdev->attr;
  return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                   struct _compat_ibv_port_attr *compat) {
  fv_context_t *c = (fv_context_t *)context;
  if (port_num < 1 || port_num > c->fdev->nports) return EINVAL;
  struct ibv_port_attr *a = (struct ibv_port_attr *)compat;
  char s = c->fdev->port_state[port_num - 1];
  uint32_t lid = c->lid[port_num];
  /* A link that is up but has no LID (no subnet manager) is INIT, as on real fabrics. */
  enum ibv_port_state state = s == 'D' ? IBV_PORT_DOWN : (s == 'A' && lid) ? IBV_PORT_ACTIVE
                                                                         : IBV_PORT_INIT;
  *a = (struct ibv_port_attr){
      .state = state, .max_mtu = IBV_MTU_4096, .active_mtu = IBV_MTU_4096, .gid_tbl_len = 1,
      .port_cap_flags = 0, .max_msg_sz = FV_MAX_MSG, .pkey_tbl_len = 1, .lid = (uint16_t)lid,
      .sm_lid = fv_fabric ? 1 : 0, .lmc = 0, .max_vl_num = 4, .sm_sl = 0, .subnet_timeout = 18,
      .active_width = 2, .active_speed = 64, .phys_state = (uint8_t)(s == 'D' ? 3 : 5),
      .link_layer = (uint8_t)(c->fdev->link_layer[port_num - 1] == 'E'
                                  ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND)};
  return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid) {
  fv_context_t *c = (fv_context_t *)context;
  if (port_num < 1 || port_num > c->fdev->nports || index != 0) return -1;
  memset(gid, 0, sizeof *gid);
  gid->global.subnet_prefix = __builtin_bswap64(0xfe80000000000000ull);
  gid->global.interface_id = __builtin_bswap64(c->fdev->guid + port_num - 1);
  return 0;
}

/* ibv_devinfo asks the GID type through this private entry point; its enum (0: IB/RoCE v1)
 * is rdma-core's internal one, so it is written as the int it is. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
                       int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
                       int *type) {
  (void)context, (void)port_num, (void)index;
  *type = 0;
  return 0;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey) {
  (void)context, (void)port_num;
  if (index != 0) return -1;
  *pkey = (__be16)__builtin_bswap16(0xffff);
  return 0;
}

/* ---- names ---------------------------------------------------------------------------------- */
const char *ibv_node_type_str(enum ibv_node_type node_type) {
  return node_type == IBV_NODE_CA ? "InfiniBand channel adapter" : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state port_state) {
  static const char *const names[] = {"PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED",
                                      "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};
  return (unsigned)port_state < 6 ? names[port_state] : "invalid state";
}

const char *ibv_wc_status_str(enum ibv_wc_status status) {
  static const char *const names[] = {
      "success", "local length error", "local QP operation error", "local EE context "
      "operation error", "local protection error", "Work Request Flushed Error",
      "memory management operation error", "bad response error", "local access error",
      "remote invalid request error", "remote access error", "remote operation error",
      "transport retry counter exceeded", "RNR retry counter exceeded",
      "local RDD violation error", "remote invalid RD request", "aborted error",
      "invalid EE context number", "invalid EE context state", "fatal error",
      "response timeout error", "general error", "TM error", "TM rendezvous error"};
  return (unsigned)status < sizeof names / sizeof names[0] ? names[status] : "unknown";
}
