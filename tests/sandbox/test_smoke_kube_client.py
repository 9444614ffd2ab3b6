from kubernetes_asyncio import client


async def test_kube_client_lists_the_default_namespaces(kube_client):
    namespaces = await client.CoreV1Api(kube_client).list_namespace()
    names = {n.metadata.name for n in namespaces.items}
    assert {"default", "kube-system"} <= names
    assert int(namespaces.metadata.resource_version) > 0
