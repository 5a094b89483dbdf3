"""Step times of the runs in DIR/s/VARIANT.REP.out (the layout the run-*.sh scripts leave in
$OUT): per variant, the median over runs of each run's mean step (the script's
time_per_step_ms) and of each run's median step (robust to the 26-46 ms hiccups some runs
show), % of ideal, and new against old paired by repetition.
Usage: python3 step_medians.py DIR  (DIR: where all.tar.gz was unpacked)"""
import glob, re, statistics as S, sys
d = sys.argv[1]
def steps(f):
    t = open(f).read()
    return [float(x) for x in re.findall(r'per_step_ms ([\d.,]+)', t)[-1].split(',') if x][1:]
rows = {}
for f in sorted(glob.glob(d + '/s/*.[0-9]*.out')):
    v, rep = f.split('/')[-1][:-4].rsplit('.', 1)
    st = steps(f)
    rows.setdefault(v, {})[int(rep)] = (S.mean(st), S.median(st))
for v in sorted(rows):
    r = rows[v]
    print('%-7s n %2d  mean-of-steps median %.2f   median-of-steps median %.2f (%.2f-%.2f)' % (v, len(r), S.median(x[0] for x in r.values()), S.median(x[1] for x in r.values()), min(x[1] for x in r.values()), max(x[1] for x in r.values())))
ideal = [k for k in rows if k.startswith('ideal')][0]
im = S.median(x[1] for x in rows[ideal].values())
for v in sorted(rows):
    if v.startswith('ideal'): continue
    print(v, '%% of ideal by median steps: %.1f' % (100 * im / S.median(x[1] for x in rows[v].values())))
if 'old2' in rows and 'new2' in rows:
    ks = sorted(set(rows['old2']) & set(rows['new2']))
    pr = [rows['new2'][k][1] / rows['old2'][k][1] for k in ks]
    print('new/old paired (median steps):', ' '.join('%.2f' % x for x in pr), 'median %.3f' % S.median(pr), 'new faster in', sum(x < 1 for x in pr), 'of', len(pr))
