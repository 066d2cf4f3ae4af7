import json,sys,collections
p=json.load(open(sys.argv[1]))
nodes={n['id']:n for n in p['nodes']}
dt=collections.Counter()
for s,d in zip(p['samples'],p['timeDeltas']): dt[s]+=d
self=collections.Counter()
for nid,t in dt.items():
  cf=nodes[nid]['callFrame']; self[(cf['functionName'] or '(anon)')+' '+cf['url'].split('/')[-1]+':'+str(cf['lineNumber'])]+=t
tot=sum(self.values())
for k,v in self.most_common(int(sys.argv[2])): print(f"{v/1000:9.1f} ms {100*v/tot:5.1f}% {k}")
print('total',tot/1000)
