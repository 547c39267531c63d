/* ofi_probe.c: gasnet-ofi-probe, what libfabric offers the ofi conduit on this host, through
 * libfabric's own fi_getinfo with the conduit's hints (ofi_hints.h): every provider and domain
 * a rank could open, with RMA or without, as one JSON array on stdout (gasnetrun --probe and the
 * conduit's launcher half read it), or a table with --text. Exit 0, also when nothing fits (an
 * empty list); 2 for a bad argument. */
#include <arpa/inet.h>
#include <rdma/fi_errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ofi_hints.h"

static struct fi_info *query(uint64_t caps) {
  struct fi_info *h = fi_allocinfo(), *info = NULL;
  if (!h) return NULL;
  ofi_fill_hints(h, caps);
  if (fi_getinfo(OFI_API, NULL, NULL, 0, h, &info) != 0) info = NULL;
  fi_freeinfo(h);
  return info;
}

static const char *format_name(uint32_t f) {
  switch (f) {
    case FI_SOCKADDR_IN: return "FI_SOCKADDR_IN";
    case FI_SOCKADDR_IN6: return "FI_SOCKADDR_IN6";
    case FI_ADDR_STR: return "FI_ADDR_STR";
    default: return "other";
  }
}

static bool loopback(const struct fi_info *i) {
  if (!strcmp(i->domain_attr->name, "lo")) return true;
  if (i->addr_format == FI_SOCKADDR_IN && i->src_addr)
    return (ntohl(((const struct sockaddr_in *)i->src_addr)->sin_addr.s_addr) >> 24) == 127;
  if (i->addr_format == FI_SOCKADDR_IN6 && i->src_addr) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)i->src_addr)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a);
  }
  return false;
}

/* A JSON string of text that holds no quote or backslash (provider and domain names). */
static void emit(struct fi_info *i, bool rma, bool *first, bool text) {
  bool saw = i->tx_attr->msg_order & FI_ORDER_SAW;
  if (text) {
    printf("%-16s %-12s %-18s rma=%s saw=%s inject=%zu mr_mode=0x%x%s\n",
           i->fabric_attr->prov_name, i->domain_attr->name, i->fabric_attr->name,
           rma ? "yes" : "no", saw ? "yes" : "no", i->tx_attr->inject_size,
           (unsigned)i->domain_attr->mr_mode, loopback(i) ? " loopback" : "");
    return;
  }
  printf("%s\n {\"provider\": \"%s\", \"domain\": \"%s\", \"fabric\": \"%s\", "
         "\"addr_format\": \"%s\", \"rma\": %s, \"send_after_write\": %s, "
         "\"inject_size\": %zu, \"mr_mode\": %u, \"loopback\": %s}",
         *first ? "" : ",", i->fabric_attr->prov_name, i->domain_attr->name,
         i->fabric_attr->name, format_name(i->addr_format), rma ? "true" : "false",
         saw ? "true" : "false", i->tx_attr->inject_size, (unsigned)i->domain_attr->mr_mode,
         loopback(i) ? "true" : "false");
  *first = false;
}

static bool listed(struct fi_info *list, struct fi_info *one) {
  for (struct fi_info *i = list; i; i = i->next)
    if (!strcmp(i->fabric_attr->prov_name, one->fabric_attr->prov_name) &&
        !strcmp(i->domain_attr->name, one->domain_attr->name) && i->addr_format == one->addr_format)
      return true;
  return false;
}

int main(int argc, char **argv) {
  bool text = false;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--text")) {
      text = true;
    } else if (strcmp(argv[a], "--json")) {
      fprintf(stderr, "gasnet-ofi-probe: unknown argument '%s' (accepted: --json, --text)\n",
              argv[a]);
      return 2;
    }
  }
  struct fi_info *with = query(OFI_CAPS_AM | FI_RMA), *without = query(OFI_CAPS_AM);
  bool first = true;
  if (!text) printf("[");
  for (struct fi_info *i = with; i; i = i->next) emit(i, true, &first, text);
  for (struct fi_info *i = without; i; i = i->next)
    if (!listed(with, i)) emit(i, false, &first, text);
  if (!text) printf("%s]\n", first ? "" : "\n");
  fi_freeinfo(with);
  fi_freeinfo(without);
  return 0;
}
