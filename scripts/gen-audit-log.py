import json, sys
# An apiserver audit log (--audit-log-path, JSON lines) of about N MB, the mix
# of a busy cluster under a common policy: most writes at Metadata level (Pod
# status, bindings, Node status, Leases), Deployment/ReplicaSet status writes at
# RequestResponse with their whole objects, Events created, a few 409s.
# Unique auditIDs, times a few ms apart. Usage: gen-audit-log.py MB > audit.log
target = int(sys.argv[1]) * 1_000_000
out = sys.stdout
size, i = 0, 0

def t(i):
    ms = i * 3
    s = ms // 1000
    return f"2026-11-29T{(s // 3600) % 24:02d}:{(s // 60) % 60:02d}:{s % 60:02d}.{(ms % 1000) * 1000:06d}Z"

def deployment(n, gen, at):
    return {"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": f"web-{n}", "namespace": f"ns-{n % 20}", "uid": f"{n:08x}-dddd-4e3f-8a9b-0c1d2e3f4a5b",
                         "resourceVersion": str(100000 + i), "generation": gen, "creationTimestamp": "2026-11-28T00:00:00Z",
                         "labels": {"app": f"web-{n}"}, "annotations": {"deployment.kubernetes.io/revision": str(gen)},
                         "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-11-28T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}}}}}}}},
                                           {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1", "time": at[:19] + "Z", "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {"f:availableReplicas": {}, "f:conditions": {}, "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:updatedReplicas": {}}}}]},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": f"web-{n}"}},
                     "template": {"metadata": {"labels": {"app": f"web-{n}"}},
                                  "spec": {"containers": [{"name": "web", "image": f"shop:{gen}", "resources": {"limits": {"memory": "256Mi"}}}]}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}},
            "status": {"observedGeneration": gen, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2 + i % 2, "availableReplicas": 2 + i % 2,
                       "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastTransitionTime": "2026-11-28T00:00:00Z", "lastUpdateTime": "2026-11-28T00:00:00Z", "message": "Deployment has minimum availability."},
                                      {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "lastTransitionTime": "2026-11-28T00:00:00Z", "lastUpdateTime": "2026-11-28T00:00:00Z", "message": f"ReplicaSet \"web-{n}-5c4f\" has successfully progressed."}]}}

while size < target:
    at = t(i)
    k = i % 20
    base = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "auditID": f"{i:08x}-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
            "stage": "ResponseComplete", "sourceIPs": ["10.0.0.2"],
            "requestReceivedTimestamp": at, "stageTimestamp": at}
    if k < 12:
        pod = f"web-{i % 1000}-5c4f-{i % 7:05d}"
        e = dict(base, level="Metadata", verb="patch", requestURI=f"/api/v1/namespaces/ns-{i % 20}/pods/{pod}/status",
                 user={"username": "system:node:node-1", "groups": ["system:nodes", "system:authenticated"]},
                 userAgent="kubelet/v1.31.0 (linux/amd64) kubernetes/abc",
                 objectRef={"resource": "pods", "namespace": f"ns-{i % 20}", "name": pod, "apiVersion": "v1", "subresource": "status"},
                 responseStatus={"metadata": {}, "code": 200})
    elif k < 15:
        e = dict(base, level="Metadata", verb="update", requestURI="/api/v1/nodes/node-1/status",
                 user={"username": "system:node:node-1", "groups": ["system:nodes"]}, userAgent="kubelet/v1.31.0",
                 objectRef={"resource": "nodes", "name": f"node-{i % 50}", "apiVersion": "v1", "subresource": "status"},
                 responseStatus={"metadata": {}, "code": 200})
    elif k < 18:
        n = i % 1000
        d = deployment(n, 1 + (i // 20000), at)
        e = dict(base, level="RequestResponse", verb="update",
                 requestURI=f"/apis/apps/v1/namespaces/ns-{n % 20}/deployments/web-{n}/status",
                 user={"username": "system:serviceaccount:kube-system:deployment-controller"},
                 userAgent="kube-controller-manager/v1.31.0 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:deployment-controller",
                 objectRef={"resource": "deployments", "namespace": f"ns-{n % 20}", "name": f"web-{n}", "apiGroup": "apps", "apiVersion": "v1", "subresource": "status"},
                 responseStatus={"metadata": {}, "code": 200}, requestObject=d, responseObject=d)
    elif k < 19:
        pod = f"web-{i % 1000}-5c4f-{i % 7:05d}"
        ev = {"kind": "Event", "apiVersion": "v1",
              "metadata": {"name": f"{pod}.{0x187c3a4b5d6e7f80 + i:x}", "namespace": f"ns-{i % 20}", "uid": f"{i:08x}-eeee-4e3f-8a9b-0c1d2e3f4a5b", "resourceVersion": str(100000 + i), "creationTimestamp": at[:19] + "Z"},
              "involvedObject": {"kind": "Pod", "namespace": f"ns-{i % 20}", "name": pod, "apiVersion": "v1", "fieldPath": "spec.containers{web}"},
              "reason": "BackOff", "message": f"Back-off restarting failed container web in pod {pod}",
              "source": {"component": "kubelet", "host": "node-1"}, "firstTimestamp": at[:19] + "Z", "lastTimestamp": at[:19] + "Z",
              "count": 1, "type": "Warning", "reportingComponent": "kubelet", "reportingInstance": "node-1"}
        e = dict(base, level="RequestResponse", verb="create", requestURI=f"/api/v1/namespaces/ns-{i % 20}/events",
                 user={"username": "system:node:node-1"}, userAgent="kubelet/v1.31.0",
                 objectRef={"resource": "events", "namespace": f"ns-{i % 20}", "name": ev["metadata"]["name"], "apiVersion": "v1"},
                 responseStatus={"metadata": {}, "code": 201}, requestObject=ev, responseObject=ev)
    else:
        n = i % 1000
        e = dict(base, level="Metadata", verb="update", requestURI=f"/apis/apps/v1/namespaces/ns-{n % 20}/replicasets/web-{n}-5c4f",
                 user={"username": "system:serviceaccount:kube-system:replicaset-controller"}, userAgent="kube-controller-manager/v1.31.0",
                 objectRef={"resource": "replicasets", "namespace": f"ns-{n % 20}", "name": f"web-{n}-5c4f", "apiGroup": "apps", "apiVersion": "v1"},
                 responseStatus={"metadata": {}, "status": "Failure", "message": "Operation cannot be fulfilled on replicasets.apps: the object has been modified", "reason": "Conflict", "code": 409})
    s = json.dumps(e, separators=(",", ":")) + "\n"
    out.write(s)
    size += len(s)
    i += 1
