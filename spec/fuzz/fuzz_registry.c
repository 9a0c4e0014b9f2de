/* libFuzzer target for the registry loader: the input is one or more YAML files, separated by
 * a line "#---file". The loader must never crash, hang or leak, whatever the bytes. */
#include <stdint.h>
#include <string.h>

#include "registry.h"

#define MAX_FILES 8
static const char *const paths[MAX_FILES] = {
    "/nonexistent-fuzz-root/a.yaml",   "/nonexistent-fuzz-root/b.yaml",
    "/nonexistent-fuzz-root/c/d.yaml", "/nonexistent-fuzz-root/e.yaml",
    "/nonexistent-fuzz-root/f.yml",    "/nonexistent-fuzz-root/g.yaml",
    "/nonexistent-fuzz-root/h.yaml",   "/nonexistent-fuzz-root/i.yaml"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sep[] = "\n#---file\n";
    sw_registry_file files[MAX_FILES];
    size_t n = 0;
    const char *text = (const char *)data, *end = text + size;
    while (n < MAX_FILES) {
        const char *cut = memmem(text, (size_t)(end - text), sep, sizeof sep - 1);
        if (!cut || n == MAX_FILES - 1) cut = end;
        files[n] = (sw_registry_file){paths[n], text, (size_t)(cut - text)};
        n++;
        if (cut == end) break;
        text = cut + sizeof sep - 1;
    }
    sw_diags diags;
    sw_diags_init(&diags);
    sw_registry *r = sw_registry_load_files("/nonexistent-fuzz-root", files, n, &diags);
    sw_diags_finish(&diags);
    char buf[2048];
    for (size_t i = 0; i < diags.n; i++) sw_diag_format(&diags.v[i], buf, sizeof buf);
    sw_registry_free(r);
    sw_diags_free(&diags);
    return 0;
}
