# Generated documentation: specs/REFERENCE.md is `trainc schema --markdown` (the field
# reference, from compiler/check/schema.def); tests/golden/reference_test.sh fails when it is stale.
# README's table of environment variables, between its two "trainc --help-env --markdown"
# markers, is that command's output (from runtime/include/rt_env.def); tests/train/env_test.sh
# fails when it is stale.

ENV_MARK := <!-- trainc --help-env --markdown:

.PHONY: reference
reference: $(BUILD)/trainc
	$(BUILD)/trainc schema --markdown > specs/REFERENCE.md.tmp && mv specs/REFERENCE.md.tmp specs/REFERENCE.md
	$(BUILD)/trainc --help-env --markdown > $(BUILD)/env-table.md
	awk -v table=$(BUILD)/env-table.md -v begin='$(ENV_MARK) begin -->' -v end='$(ENV_MARK) end -->' \
	  '$$0 == end { skip = 0 } !skip { print } $$0 == begin { while ((getline l < table) > 0) print l; skip = 1 }' \
	  README.md > README.md.tmp && mv README.md.tmp README.md
