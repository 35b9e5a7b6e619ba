/* "Did you mean": the nearest name to a misspelt one, for unknown spec
 * keys and enum values (src/spec/) and unknown plugin options (the plugin
 * host). */
#include "suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  size_t *row = malloc((lb + 1) * sizeof *row);
  if (!row)
    return SIZE_MAX;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
      size_t best = diag + cost;
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  size_t d = row[lb];
  free(row);
  return d;
}

const char *spec_suggest(const char *word, const char *const *candidates)
{
  size_t wl = strlen(word);
  size_t limit = wl / 3 > 2 ? wl / 3 : 2;
  const char *best = NULL;
  size_t bestd = SIZE_MAX;
  for (size_t i = 0; candidates && candidates[i]; i++) {
    size_t d = edit_distance(word, candidates[i]);
    if (d < bestd) {
      bestd = d;
      best = candidates[i];
    }
  }
  if (!best || bestd > limit)
    return NULL;
  /* Rewriting every letter of a short word is not a typo. */
  size_t bl = strlen(best);
  if (bestd >= (wl > bl ? wl : bl))
    return NULL;
  return best;
}
