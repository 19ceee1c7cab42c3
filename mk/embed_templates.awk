# Turns templates/*.in into C string constants (build/gen/templates.c) for compiler/emit/template.c,
# so trainc carries its templates inside the binary.
FNR == 1 {
    if (n) print ";";
    name = FILENAME; sub(/.*\//, "", name);
    names[n++] = name;
    printf "static const char template_%d[] =\n", n - 1;
}
{
    line = $0;
    gsub(/\\/, "\\\\", line); gsub(/"/, "\\\"", line); gsub(/\?/, "\\?", line);
    printf "    \"%s\\n\"\n", line;
}
END {
    if (n) print ";";
    print "const char *const trainc_template_names[] = {";
    for (i = 0; i < n; i++) printf "    \"%s\",\n", names[i];
    print "    0\n};";
    print "const char *const trainc_template_texts[] = {";
    for (i = 0; i < n; i++) printf "    template_%d,\n", i;
    print "    0\n};";
}
