import json,sys,collections
p=json.load(open(sys.argv[1]))
nodes={n['id']:n for n in p['nodes']}
self_t=collections.Counter()
dt=p['timeDeltas']; samples=p['samples']
for s,d in zip(samples,dt): self_t[s]+=d
byfn=collections.Counter()
for nid,t in self_t.items():
  cf=nodes[nid]['callFrame']; byfn[(cf['functionName'],cf['url'].split('/')[-1],cf['lineNumber'])]+=t
tot=sum(self_t.values())
for k,v in byfn.most_common(40): print(f"{v/1000:8.1f}ms {100*v/tot:5.1f}% {k}")
