import json, sys
# An apiserver audit log of N entries at Metadata level, the way OpenShift's
# Default profile logs a busy cluster (issue 48's benchmark): no bodies.
# Of every 20 entries: 8 reads (get/list/watch), 6 Pod status patches by
# kubelets, 1 Node status update, 1 Lease update, 1 Event create, 1 Pod
# create (generated name) or delete by a controller, 1 Deployment patch or
# scale by a person (impersonated one time in four), 1 ConfigMap update or a
# refused list. Unique auditIDs, times a few ms apart.
# Usage: gen-audit-metadata.py ENTRIES > audit.log
n = int(sys.argv[1])
out = sys.stdout

def t(i):
    ms = i * 3
    s = ms // 1000
    return f"2026-11-29T{(s // 3600) % 24:02d}:{(s // 60) % 60:02d}:{s % 60:02d}.{(ms % 1000) * 1000:06d}Z"

people = ["alice@example.com", "bob@example.com", "carol@example.com", "dana@example.com"]
for i in range(n):
    at = t(i)
    k = i % 20
    ns = f"ns-{i % 20}"
    e = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
         "auditID": f"{i:08x}-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "stage": "ResponseComplete",
         "sourceIPs": ["10.0.0.2"], "requestReceivedTimestamp": at, "stageTimestamp": at,
         "annotations": {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": "RBAC: allowed"}}
    pod = f"web-{i % 1000}-5c4f-{i % 7:05d}"
    kubelet = {"username": "system:node:node-1", "groups": ["system:nodes", "system:authenticated"]}
    if k < 8:
        verb = ["get", "list", "watch"][i % 3]
        e.update(verb=verb, requestURI=f"/api/v1/namespaces/{ns}/pods" + (f"/{pod}" if verb == "get" else ""),
                 user=kubelet, userAgent="kubelet/v1.31.0 (linux/amd64) kubernetes/abc",
                 objectRef={"resource": "pods", "namespace": ns, "name": pod if verb == "get" else "", "apiVersion": "v1"},
                 responseStatus={"metadata": {}, "code": 200})
    elif k < 14:
        e.update(verb="patch", requestURI=f"/api/v1/namespaces/{ns}/pods/{pod}/status", user=kubelet,
                 userAgent="kubelet/v1.31.0 (linux/amd64) kubernetes/abc",
                 objectRef={"resource": "pods", "namespace": ns, "name": pod, "apiVersion": "v1", "subresource": "status"},
                 responseStatus={"metadata": {}, "code": 200})
    elif k == 14:
        e.update(verb="update", requestURI="/api/v1/nodes/node-1/status", user=kubelet, userAgent="kubelet/v1.31.0",
                 objectRef={"resource": "nodes", "name": f"node-{i % 50}", "apiVersion": "v1", "subresource": "status"},
                 responseStatus={"metadata": {}, "code": 200})
    elif k == 15:
        e.update(verb="update", requestURI=f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-{i % 50}",
                 user=kubelet, userAgent="kubelet/v1.31.0",
                 objectRef={"resource": "leases", "namespace": "kube-node-lease", "name": f"node-{i % 50}", "apiGroup": "coordination.k8s.io", "apiVersion": "v1"},
                 responseStatus={"metadata": {}, "code": 200})
    elif k == 16:
        e.update(verb="create", requestURI=f"/api/v1/namespaces/{ns}/events", user=kubelet, userAgent="kubelet/v1.31.0",
                 objectRef={"resource": "events", "namespace": ns, "name": f"{pod}.{i:x}", "apiVersion": "v1"},
                 responseStatus={"metadata": {}, "code": 201})
    elif k == 17:
        rs = {"username": "system:serviceaccount:kube-system:replicaset-controller"}
        if i % 2:
            e.update(verb="create", requestURI=f"/api/v1/namespaces/{ns}/pods", user=rs, userAgent="kube-controller-manager/v1.31.0",
                     objectRef={"resource": "pods", "namespace": ns, "apiVersion": "v1"}, responseStatus={"metadata": {}, "code": 201})
        else:
            e.update(verb="delete", requestURI=f"/api/v1/namespaces/{ns}/pods/{pod}", user=rs, userAgent="kube-controller-manager/v1.31.0",
                     objectRef={"resource": "pods", "namespace": ns, "name": pod, "apiVersion": "v1"}, responseStatus={"metadata": {}, "code": 200})
    elif k == 18:
        who = people[i % 4]
        d = f"web-{i % 1000}"
        sub = "scale" if i % 3 == 0 else ""
        e.update(verb="patch", requestURI=f"/apis/apps/v1/namespaces/{ns}/deployments/{d}" + (f"/{sub}" if sub else ""),
                 user={"username": who} if i % 4 else {"username": "system:admin"}, userAgent="kubectl/v1.31.0 (linux/amd64)",
                 objectRef={"resource": "deployments", "namespace": ns, "name": d, "apiGroup": "apps", "apiVersion": "v1", "subresource": sub},
                 responseStatus={"metadata": {}, "code": 200})
        if i % 4 == 0:
            e["impersonatedUser"] = {"username": who}
    else:
        if (i // 20) % 2:
            e.update(verb="update", requestURI=f"/api/v1/namespaces/{ns}/configmaps/settings", user={"username": "system:serviceaccount:ci:deployer"},
                     userAgent="helm/v3.15", objectRef={"resource": "configmaps", "namespace": ns, "name": "settings", "apiVersion": "v1"},
                     responseStatus={"metadata": {}, "code": 200})
        else:
            e.update(verb="list", requestURI=f"/api/v1/namespaces/{ns}/secrets", user={"username": "system:serviceaccount:shop:reporter"},
                     userAgent="reporter/v1.4.2", objectRef={"resource": "secrets", "namespace": ns, "apiVersion": "v1"},
                     responseStatus={"metadata": {}, "code": 403, "reason": "Forbidden"},
                     annotations={"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""})
    out.write(json.dumps(e, separators=(",", ":")) + "\n")
