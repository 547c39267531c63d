/* ibv_wire.h: what travels between ranks of the ibv conduit: the connection handshake over UD
 * (also exit and "finished" notices) and the header of every AM message over RC. Tests and
 * tools that forge or read these include this header; nothing else lays them out. Both ends
 * run the same build, so fields are in host byte order. */
#ifndef GASNETC_IBV_WIRE_H
#define GASNETC_IBV_WIRE_H

#include <stdint.h>

#define IBV_MAX_RAILS 8
#define IBV_QKEY 0x47415345u   /* "GASE": the Q_Key of every rank's UD queue pair */
#define IBV_UD_MAGIC 0x56424947u /* "GIBV" */
#define IBV_UD_GRH 40u         /* a UD receive starts with the Global Routing Header's space */

/* ---- the UD handshake datagram ---- */
enum { UD_REQ = 1, UD_REP = 2, UD_CALL = 4, UD_EXIT = 5, UD_FIN = 6 };
typedef struct {
  uint32_t magic, tag; /* IBV_UD_MAGIC; the job's tag (a hash of its job id) */
  uint8_t type, nrails;
  uint16_t pad;
  uint32_t src;        /* the sender's rank, checked against the queue pair and LID it came from */
  int32_t code;        /* UD_EXIT: the job's exit code */
  uint32_t phase;      /* UD_EXIT: the last barrier the job's enders had passed */
  uint32_t qpn[IBV_MAX_RAILS]; /* UD_REQ, UD_REP: the sender's RC queue pairs, one per rail */
} ibv_ud_msg_t;

/* The job's tag as every rank computes it from the job id (FNV-1a). */
static inline uint32_t ibv_job_tag(const char *jobid) {
  uint32_t h = 2166136261u;
  for (; *jobid; jobid++) h = (h ^ (uint8_t)*jobid) * 16777619u;
  return h;
}

/* ---- an AM message over RC: this header, the arguments, then (Medium, packed Long) the
 * payload ---- */
enum {
  MSG_REPLY = 0x80,  /* a reply (returns the request's credit) */
  MSG_PACKED = 0x40, /* a Long whose payload follows the arguments (copied into place) */
  MSG_CTRL = 0x20,   /* runtime traffic: credits only, or the connection's first word */
  MSG_HELLO = 0x10,  /* with CTRL: the lower rank's first message on a new connection */
};
typedef struct {
  uint8_t category, handler, nargs, flags;
  uint16_t credits; /* returned to the receiver with this message */
  uint16_t pad;
  uint32_t src;
  uint32_t nbytes;
  uint64_t dst;
} ibv_msg_t;
_Static_assert(sizeof(ibv_msg_t) == 24, "message header");
static inline uint32_t ibv_msg_bytes(int nargs) {
  return (uint32_t)(sizeof(ibv_msg_t) + 4u * (uint32_t)nargs + 7u) & ~7u;
}

#endif
