# Session 52: tests/gpu/reset_probe.cu under the tools of 03d6c0a, the
# build before cudaDeviceReset was handled (carried as build/old; the
# probe from build/gpu-probes), beside plain CUDA:
#   bash bench/results/2026-11-29/s52/reset_before.sh
P=build/gpu-probes/reset_probe W=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/build/old/lib
for tool in plain umrec umreplay; do
	case $tool in
	plain) run=() ;;
	umrec) run=(build/old/bin/umrec -q -o $W/r.db --max-managed 8G --) ;;
	umreplay) run=(build/old/bin/umreplay -q --policy ideal --max-managed 8G --) ;;
	esac
	echo "== $tool (03d6c0a)"
	timeout 60 "${run[@]}" $P 2>&1 | tail -4
	echo "exit ${PIPESTATUS[0]}"
done
rm -rf $W
