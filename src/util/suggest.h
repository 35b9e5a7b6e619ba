/* "Did you mean": name suggestions by edit distance. */
#ifndef DWL_SUGGEST_H
#define DWL_SUGGEST_H

/* The nearest of `candidates` (NULL-terminated) to `word` by edit distance,
 * or NULL when none is close enough to suggest. */
const char *spec_suggest(const char *word, const char *const *candidates);

#endif
