# `make train-effnet`: a small EfficientNet-like net (MBConv blocks with squeeze-and-excitation
# gates, SiLU; tests/train/fmnist_effnet.spec) trains on all of Fashion-MNIST for 5 epochs and
# must reach TRAIN_EFFNET_MIN top-1 (too long for `make test`). The figure is recorded in
# bench/RESULTS.md.
TRAIN_EFFNET_MIN ?= 92.0
.PHONY: train-effnet
train-effnet: all
	@mkdir -p $(BUILD)/train-effnet
	$(BUILD)/trainc build tests/train/fmnist_effnet.spec -o $(BUILD)/train-effnet/effnet
	rm -rf $(BUILD)/train-effnet/run
	time $(BUILD)/train-effnet/effnet --out $(BUILD)/train-effnet/run | tee $(BUILD)/train-effnet/log.txt
	@grep '^final:' $(BUILD)/train-effnet/log.txt | awk -v min=$(TRAIN_EFFNET_MIN) \
	  '{ v = $$4 + 0; if (v >= min) print "train-effnet: " v "% >= " min "%"; else { print "train-effnet: FAIL " v "% < " min "%"; exit 1 } }'

# `make train-vit`: the small Vision Transformer example (4x4 patches, 4 encoder layers 64
# wide; specs/examples/fmnist_vit.spec) trains on all of Fashion-MNIST and must reach
# TRAIN_VIT_MIN top-1 (too long for `make test`, which trains it 40 steps:
# tests/train/vit_smoke_test.sh). The figure is recorded in bench/RESULTS.md.
TRAIN_VIT_MIN ?= 88.0
.PHONY: train-vit
train-vit: all
	@mkdir -p $(BUILD)/train-vit
	$(BUILD)/trainc build specs/examples/fmnist_vit.spec -o $(BUILD)/train-vit/vit
	rm -rf $(BUILD)/train-vit/run
	time $(BUILD)/train-vit/vit --out $(BUILD)/train-vit/run | tee $(BUILD)/train-vit/log.txt
	@grep '^final:' $(BUILD)/train-vit/log.txt | awk -v min=$(TRAIN_VIT_MIN) \
	  '{ v = $$4 + 0; if (v >= min) print "train-vit: " v "% >= " min "%"; else { print "train-vit: FAIL " v "% < " min "%"; exit 1 } }'
