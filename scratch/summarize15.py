import csv, math, sys, collections, pathlib
d = pathlib.Path(sys.argv[1])
cat = {}
for line in open('scratch/shapes15_cat.csv'):
    c, m, n, k = line.strip().split(','); cat[(m, n, k)] = c
def load(name):
    p = d / name
    return {(r['m'], r['n'], r['k']): r for r in csv.DictReader(open(p))} if p.exists() else {}
runs = {n: load(f'r{n}.csv') for n in ('15a', '15b', '15c', '14', 'best', 'torch')}
g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float('nan')
cats = sorted(set(cat.values()))
print(f"{'category':16s} n " + ' '.join(f"{n:>12s}" for n in runs))
for c in cats + ['all']:
    keys = [k for k, v in cat.items() if c in ('all', v)]
    cells = []
    for n, r in runs.items():
        v = [float(r[k]['pct_cublas']) for k in keys if k in r and r[k]['pct_cublas']]
        cells.append(f"{g(v):6.1f}/{min(v) if v else float('nan'):5.1f}")
    print(f"{c:16s} {len(keys):3d} " + ' '.join(f"{x:>12s}" for x in cells))
bad = [(n, k, r[k]['status']) for n, r in runs.items() for k in r if r[k]['status'] not in ('ok', 'pass', 'PASS', 'OK')]
print('statuses not ok:', bad[:10], len(bad))
