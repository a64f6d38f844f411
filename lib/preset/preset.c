/*
 * lib/preset: the dedup settings of published pipelines, as data. Each row
 * is minlsh's nearest equivalent of one pipeline's shingling, MinHash
 * length, banding and threshold; docs/presets.md gives the sources line by
 * line and what minlsh cannot reproduce. The table sits in the library,
 * above nothing but lib/common, so that the command, Python and Go read one
 * copy instead of three that could drift apart.
 */
#include "common/common.h"

/* Word presets keep MINLSH_NORM_CJK_WORDS where the pipeline used a
 * language-aware tokenizer (it is the word unit's default, and splitting CJK
 * text on spaces alone would make a sentence one word); a pipeline that
 * split on spaces only does without it. A Unicode flag always comes with
 * its ASCII twin, as minlsh_shingler_new would add it. */
#define PRESET_FOLD (MINLSH_NORM_CASEFOLD | MINLSH_NORM_UCASEFOLD)
#define PRESET_PUNCT (MINLSH_NORM_PUNCT | MINLSH_NORM_UPUNCT)
#define PRESET_SPACE (MINLSH_NORM_WHITESPACE | MINLSH_NORM_UWHITESPACE)

typedef struct preset_row {
    const char *name;
    uint32_t unit, shingle_k, flags, num_perm, bands, rows;
    double threshold;
    const char *pipeline;
    const char *source;
} preset_row;

static const preset_row presets[] = {
    {"fineweb", MINLSH_UNIT_WORD, 5,
     PRESET_FOLD | PRESET_PUNCT | PRESET_SPACE | MINLSH_NORM_CJK_WORDS, 112, 14, 8, 0.75,
     "FineWeb (Hugging Face, datatrove MinHash)",
     "Penedo et al. 2024, The FineWeb Datasets, arXiv:2406.17557, sec. 3.4 and "
     "app. E.1; huggingface/datatrove examples/fineweb.py (MinhashConfig) and "
     "src/datatrove/pipeline/dedup/minhash.py"},
    {"refinedweb", MINLSH_UNIT_WORD, 5, MINLSH_NORM_CJK_WORDS, 9000, 450, 20, 0.8,
     "RefinedWeb (Falcon LLM)",
     "Penedo et al. 2023, The RefinedWeb Dataset for Falcon LLM, arXiv:2306.01116, "
     "sec. 3.3; banding as 450 buckets of 20 per arXiv:2406.17557 app. E.1"},
    {"lee2022", MINLSH_UNIT_WORD, 5, 0, 9000, 450, 20, 0.8,
     "Lee et al., NearDup (Deduplicating Training Data Makes Language Models Better)",
     "Lee et al. 2022, ACL, arXiv:2107.06499, sec. 4.2 and app. A"},
    {"lee2022-0.9", MINLSH_UNIT_WORD, 5, 0, 800, 40, 20, 0.9,
     "Lee et al., NearDup, the alternative configuration at 0.9",
     "Lee et al. 2022, ACL, arXiv:2107.06499, app. A"},
    {"nemo-curator", MINLSH_UNIT_CODEPOINT, 24, 0, 260, 20, 13, 0.8,
     "NVIDIA NeMo Curator fuzzy deduplication defaults",
     "NVIDIA/NeMo-Curator nemo_curator/modules/config.py (FuzzyDuplicatesConfig) and "
     "nemo_curator/modules/fuzzy_dedup/minhash.py"},
    {"slimpajama", MINLSH_UNIT_CODEPOINT, 13, PRESET_FOLD | MINLSH_NORM_PUNCT | PRESET_SPACE,
     128, 9, 13, 0.8, "SlimPajama (Cerebras)",
     "Cerebras/modelzoo src/cerebras/modelzoo/data_preparation/nlp/slimpajama/"
     "dedup/to_hash.py and README.md (step 3); Soboleva et al. 2023"},
};

#define N_PRESETS (sizeof presets / sizeof presets[0])

MINLSH_API uint32_t minlsh_preset_count(void) { return (uint32_t)N_PRESETS; }

static int fill(minlsh_preset *out, const preset_row *row) {
    /* Version 1 is the whole struct; a later version would fill only what
     * the caller's version has. */
    out->unit = row->unit;
    out->shingle_k = row->shingle_k;
    out->flags = row->flags;
    out->num_perm = row->num_perm;
    out->bands = row->bands;
    out->rows = row->rows;
    out->reserved = 0;
    out->threshold = row->threshold;
    out->name = row->name;
    out->pipeline = row->pipeline;
    out->source = row->source;
    return MINLSH_OK;
}

static int check_out(const minlsh_preset *out) {
    if (out == NULL) return MINLSH_E_NULL;
    if (out->version < 1 || out->version > MINLSH_PRESET_VERSION) return MINLSH_E_VERSION;
    return MINLSH_OK;
}

MINLSH_API int minlsh_preset_get(minlsh_preset *out, uint32_t index) {
    int rc = check_out(out);
    if (rc != MINLSH_OK) return rc;
    if (index >= N_PRESETS) return MINLSH_E_NOTFOUND;
    return fill(out, &presets[index]);
}

static int ascii_lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

static int same_name(const char *a, const char *b) {
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b)) return 0;
    return *a == *b;
}

MINLSH_API int minlsh_preset_find(minlsh_preset *out, const char *name) {
    size_t i;
    int rc = check_out(out);
    if (rc != MINLSH_OK) return rc;
    if (name == NULL) return MINLSH_E_NULL;
    for (i = 0; i < N_PRESETS; i++)
        if (same_name(presets[i].name, name)) return fill(out, &presets[i]);
    return MINLSH_E_NOTFOUND;
}
