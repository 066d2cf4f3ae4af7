import json,sys,collections
p=json.load(open(sys.argv[1]))
nodes={n['id']:n for n in p['nodes']}
parent={}
for n in p['nodes']:
  for c in n.get('children',[]): parent[c]=n['id']
self_t=collections.Counter()
for s,d in zip(p['samples'],p['timeDeltas']): self_t[s]+=d
incl=collections.Counter()
for nid,t in self_t.items():
  seen=set(); x=nid
  while x is not None:
    cf=nodes[x]['callFrame']; k=(cf['functionName'],cf['url'].split('/')[-1])
    if k not in seen: incl[k]+=t; seen.add(k)
    x=parent.get(x)
for k,v in incl.most_common(60):
  if k[0] in ('(idle)','(root)'): continue
  print(f"{v/1000:8.1f}ms {k}")
