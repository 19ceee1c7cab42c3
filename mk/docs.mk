# Generated documentation: specs/REFERENCE.md is `trainc schema --markdown` (the field
# reference, from compiler/check/schema.def); tests/golden/reference_test.sh fails when it is stale.

.PHONY: reference
reference: $(BUILD)/trainc
	$(BUILD)/trainc schema --markdown > specs/REFERENCE.md.tmp && mv specs/REFERENCE.md.tmp specs/REFERENCE.md
