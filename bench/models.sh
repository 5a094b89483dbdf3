# bench/models.sh: the models of the benchmark suite (sourced by bench/suite.sh).
# model_command MODEL BATCH prints the command line that trains MODEL with
# BATCH samples per step; default_batch MODEL the batch the suite's grid uses.
# Sizes were chosen so W (the live peak umplan reports) is a few GB. A run
# costs 15-20 s of start-up alone (imports; transformers' takes most), so a
# model's suite needs several GPU commands: on the H100, "base grid" at two
# ratios took 508 s for gpt2 and 370 s for resnet152.
MODELS="gpt2 bert vit resnet152 dlrm"
STEPS=${STEPS:-5}   # the first is warm-up; the median of the others is reported

default_batch() {
	case $1 in
	gpt2) echo 4 ;;      # GPT-2 small: 12 x 768, 124 M parameters, 512 tokens
	bert) echo 8 ;;      # BERT-large: 24 x 1024, 335 M parameters, 128 tokens
	vit) echo 32 ;;      # ViT-B/16: 86 M parameters, 224 x 224 images
	resnet152) echo 16 ;;
	dlrm) echo 4096 ;;   # 8 tables x 2 M rows x 64: 4 GB of embeddings
	*) return 1 ;;
	esac
}

model_command() {
	local py=examples/pytorch common=(--steps $STEPS --nvtx --batch-size "$2")
	case $1 in
	gpt2) echo python3 $py/gpt2.py --n-layer 12 --n-embd 768 --n-head 12 --seq-len 512 "${common[@]}" ;;
	bert) echo python3 $py/bert.py --seq-len 128 "${common[@]}" ;;
	vit) echo python3 $py/vit.py --arch vit_base_patch16_224 "${common[@]}" ;;
	resnet152) echo python3 $py/resnet.py --depth 152 "${common[@]}" ;;
	dlrm) echo python3 $py/dlrm.py --rows 2000000 "${common[@]}" ;;
	*) return 1 ;;
	esac
}
