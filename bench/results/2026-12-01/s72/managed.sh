# The MLP on PyTorch's managed allocator (every tensor from cudaMallocManaged):
# plain, and under umrec and umreplay --policy ideal of 989a52a (old) and of
# this build (new), three rounds in turn; the step time and the checksum.
M=(python3 examples/pytorch/mlp.py --steps 30 --managed-allocator build/examples/libmanaged_alloc.so)
for r in 1 2 3; do
  for v in plain old.umrec new.umrec old.ideal new.ideal; do
    side=${v%%.*}; tool=${v#*.}
    case $v in
      plain) run=() ;;
      *.umrec) run=(carry/$side/bin/umrec -q -o /tmp/m.$side.db --max-managed 16G --) ;;
      *.ideal) run=(carry/$side/bin/umreplay --policy ideal -q --max-managed 16G --) ;;
    esac
    out=$(timeout 120 "${run[@]}" "${M[@]}" 2>/tmp/m.err); rc=$?
    echo "$r $v rc=$rc $(grep -E '^time_per_step_ms' <<<"$out") $(grep -E '^checksum' <<<"$out")"
  done
done
P=build/gpu-probes/managed_probe
$P > /tmp/mp.plain 2>&1; echo "managed_probe plain rc=$? $(tail -1 /tmp/mp.plain)"
carry/new/bin/umreplay --policy ondemand --max-managed 16G -q -- $P > /tmp/mp.new 2>&1; echo "managed_probe new ondemand rc=$? $(tail -1 /tmp/mp.new)"
diff <(grep '^step' /tmp/mp.plain) <(grep '^step' /tmp/mp.new) >/dev/null && echo "managed_probe: same steps"
