/* Run ids: a random UUID (version 4) per run, the id the summary, the
 * state row, the run table and lineage events carry. */
#include "run_id.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

/* A run's id, UUID-like (version 4), random: written to the state row
 * with the commit, it tells afterwards whether the commit happened. */
void run_id_new(char out[40])
{
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) {
    /* No entropy from OpenSSL: time and pid are still unique enough to
     * tell this run from the last committed one. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long v[2] = {(unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec,
                               (unsigned long long)getpid()};
    memcpy(b, v, sizeof b);
  }
  b[6] = (unsigned char)((b[6] & 0x0F) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3F) | 0x80);
  char *p = out;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      *p++ = '-';
    p += sprintf(p, "%02x", b[i]);
  }
}
