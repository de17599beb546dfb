"""Volumes (core/v1): the pod volume and every volume source it may name.

Field names, types, required lists and merge/list extensions follow the Kubernetes 1.28 API
types (facts); the descriptions are our own.
"""

from __future__ import annotations

from kubeloop.server.openapi.dsl import (
    CORE,
    META,
    QUANTITY,
    Schema,
    array,
    boolean,
    definition,
    int64,
    integer,
    ref,
    string,
    string_map,
)

DEFINITIONS: dict[str, Schema] = {
    CORE + "AWSElasticBlockStoreVolumeSource": definition(
        "An AWS EBS disk mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "partition": integer("The partition to mount; the whole volume when 0."),
            "readOnly": boolean("Mount read-only."),
            "volumeID": string("The ID of the volume."),
        }, ["volumeID"],
    ),
    CORE + "AzureDiskVolumeSource": definition(
        "An Azure data disk mounted into the pod.",
        {
            "cachingMode": string("The host caching mode."),
            "diskName": string("The disk name."),
            "diskURI": string("The disk URI."),
            "fsType": string("Filesystem type to mount, such as ext4."),
            "kind": string("The disk kind."),
            "readOnly": boolean("Mount read-only."),
        }, ["diskName", "diskURI"],
    ),
    CORE + "AzureFileVolumeSource": definition(
        "An Azure File share mounted into the pod.",
        {
            "readOnly": boolean("Mount read-only."),
            "secretName": string("The Secret with the account credentials."),
            "shareName": string("The share name."),
        }, ["secretName", "shareName"],
    ),
    CORE + "CSIVolumeSource": definition(
        "A volume provided by a CSI driver.",
        {
            "driver": string("The driver name."),
            "fsType": string("Filesystem type to mount, such as ext4."),
            "nodePublishSecretRef": ref(CORE + "LocalObjectReference", "A Secret passed to the driver on publish."),
            "readOnly": boolean("Mount read-only."),
            "volumeAttributes": string_map("Driver-specific attributes."),
        }, ["driver"],
    ),
    CORE + "CephFSVolumeSource": definition(
        "A Ceph filesystem mounted into the pod.",
        {
            "monitors": array(string(), "Monitor addresses."),
            "path": string("The path."),
            "readOnly": boolean("Mount read-only."),
            "secretFile": string("Path of the keyring file."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
            "user": string("The user name."),
        }, ["monitors"],
    ),
    CORE + "CinderVolumeSource": definition(
        "An OpenStack Cinder volume mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "readOnly": boolean("Mount read-only."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
            "volumeID": string("The ID of the volume."),
        }, ["volumeID"],
    ),
    CORE + "ConfigMapProjection": definition(
        "ConfigMap keys projected into a projected volume.",
        {
            "items": array(ref(CORE + "KeyToPath"), "Which keys to project and where; all keys when empty."),
            "name": string("The ConfigMap's name."),
            "optional": boolean("Whether the ConfigMap may be missing."),
        },
    ),
    CORE + "ConfigMapVolumeSource": definition(
        "A ConfigMap whose keys appear as files in a volume.",
        {
            "defaultMode": integer("File mode bits of the created files. Defaults to 0644."),
            "items": array(ref(CORE + "KeyToPath"), "Which keys to project and where; all keys when empty."),
            "name": string("The ConfigMap's name."),
            "optional": boolean("Whether the ConfigMap may be missing."),
        },
    ),
    CORE + "DownwardAPIProjection": definition(
        "Downward API items projected into a projected volume.",
        {
            "items": array(ref(CORE + "DownwardAPIVolumeFile"), "The files to create."),
        },
    ),
    CORE + "DownwardAPIVolumeFile": definition(
        "One file of a downward API volume.",
        {
            "fieldRef": ref(CORE + "ObjectFieldSelector", "A pod field to write."),
            "mode": integer("File mode bits of this file."),
            "path": string("Relative path of the file."),
            "resourceFieldRef": ref(CORE + "ResourceFieldSelector", "A container resource to write."),
        }, ["path"],
    ),
    CORE + "DownwardAPIVolumeSource": definition(
        "Pod metadata and resources exposed as files.",
        {
            "defaultMode": integer("File mode bits of the created files. Defaults to 0644."),
            "items": array(ref(CORE + "DownwardAPIVolumeFile"), "The files to create."),
        },
    ),
    CORE + "EmptyDirVolumeSource": definition(
        "A scratch directory that lives as long as the pod.",
        {
            "medium": string("Storage medium: empty for the node's default, or Memory."),
            "sizeLimit": ref(QUANTITY, "The most storage the directory may use."),
        },
    ),
    CORE + "EphemeralVolumeSource": definition(
        "A volume backed by a claim that lives and dies with the pod.",
        {
            "volumeClaimTemplate": ref(CORE + "PersistentVolumeClaimTemplate", "The claim to create for the pod."),
        },
    ),
    CORE + "FCVolumeSource": definition(
        "A Fibre Channel volume mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "lun": integer("The target LUN number."),
            "readOnly": boolean("Mount read-only."),
            "targetWWNs": array(string(), "Target world wide names."),
            "wwids": array(string(), "World wide identifiers."),
        },
    ),
    CORE + "FlexVolumeSource": definition(
        "A volume provided by a FlexVolume driver.",
        {
            "driver": string("The driver name."),
            "fsType": string("Filesystem type to mount, such as ext4."),
            "options": string_map("Driver options."),
            "readOnly": boolean("Mount read-only."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
        }, ["driver"],
    ),
    CORE + "FlockerVolumeSource": definition(
        "A Flocker dataset mounted into the pod.",
        {
            "datasetName": string("The dataset name."),
            "datasetUUID": string("The dataset UUID."),
        },
    ),
    CORE + "GCEPersistentDiskVolumeSource": definition(
        "A GCE persistent disk mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "partition": integer("The partition to mount; the whole volume when 0."),
            "pdName": string("The disk name."),
            "readOnly": boolean("Mount read-only."),
        }, ["pdName"],
    ),
    CORE + "GitRepoVolumeSource": definition(
        "A directory filled from a git repository (deprecated).",
        {
            "directory": string("The target directory name."),
            "repository": string("The repository URL."),
            "revision": string("The commit to check out."),
        }, ["repository"],
    ),
    CORE + "GlusterfsVolumeSource": definition(
        "A Glusterfs volume mounted into the pod.",
        {
            "endpoints": string("The endpoints object naming the servers."),
            "path": string("The path."),
            "readOnly": boolean("Mount read-only."),
        }, ["endpoints", "path"],
    ),
    CORE + "HostPathVolumeSource": definition(
        "A file or directory of the node mounted into the pod.",
        {
            "path": string("The path on the node."),
            "type": string("What must exist at the path; no check when empty."),
        }, ["path"],
    ),
    CORE + "ISCSIVolumeSource": definition(
        "An iSCSI disk mounted into the pod.",
        {
            "chapAuthDiscovery": boolean("Use CHAP authentication for discovery."),
            "chapAuthSession": boolean("Use CHAP authentication for the session."),
            "fsType": string("Filesystem type to mount, such as ext4."),
            "initiatorName": string("A custom initiator name."),
            "iqn": string("The target IQN."),
            "iscsiInterface": string("The iSCSI interface name."),
            "lun": integer("The target LUN number."),
            "portals": array(string(), "Further target portals."),
            "readOnly": boolean("Mount read-only."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
            "targetPortal": string("The target portal."),
        }, ["iqn", "lun", "targetPortal"],
    ),
    CORE + "KeyToPath": definition(
        "Maps a key to a file path inside a volume.",
        {
            "key": string("The key to project."),
            "mode": integer("File mode bits of this file."),
            "path": string("The relative file path to write it to."),
        }, ["key", "path"],
    ),
    CORE + "NFSVolumeSource": definition(
        "An NFS export mounted into the pod.",
        {
            "path": string("The path."),
            "readOnly": boolean("Mount read-only."),
            "server": string("The server host name or IP."),
        }, ["path", "server"],
    ),
    CORE + "PersistentVolumeClaimTemplate": definition(
        "Template of a claim created for an ephemeral volume.",
        {
            "metadata": ref(META + "ObjectMeta", "Labels and annotations copied to the created claim."),
            "spec": ref(CORE + "PersistentVolumeClaimSpec", "The spec of the created claim."),
        }, ["spec"],
    ),
    CORE + "PersistentVolumeClaimVolumeSource": definition(
        "Mounts the volume bound to a claim.",
        {
            "claimName": string("The claim in the pod's namespace."),
            "readOnly": boolean("Mount read-only."),
        }, ["claimName"],
    ),
    CORE + "PhotonPersistentDiskVolumeSource": definition(
        "A Photon Controller disk mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "pdID": string("The disk ID."),
        }, ["pdID"],
    ),
    CORE + "PortworxVolumeSource": definition(
        "A Portworx volume mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "readOnly": boolean("Mount read-only."),
            "volumeID": string("The ID of the volume."),
        }, ["volumeID"],
    ),
    CORE + "ProjectedVolumeSource": definition(
        "Several volume sources combined into one directory.",
        {
            "defaultMode": integer("File mode bits of the created files."),
            "sources": array(ref(CORE + "VolumeProjection"), "The sources to combine."),
        },
    ),
    CORE + "QuobyteVolumeSource": definition(
        "A Quobyte volume mounted into the pod.",
        {
            "group": string("The group."),
            "readOnly": boolean("Mount read-only."),
            "registry": string("The registry services."),
            "tenant": string("The tenant."),
            "user": string("The user name."),
            "volume": string("The volume."),
        }, ["registry", "volume"],
    ),
    CORE + "RBDVolumeSource": definition(
        "A Rados block device mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "image": string("The image name."),
            "keyring": string("Path of the keyring file."),
            "monitors": array(string(), "Monitor addresses."),
            "pool": string("The pool name."),
            "readOnly": boolean("Mount read-only."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
            "user": string("The user name."),
        }, ["image", "monitors"],
    ),
    CORE + "ScaleIOVolumeSource": definition(
        "A ScaleIO volume mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "gateway": string("The gateway address."),
            "protectionDomain": string("The protection domain."),
            "readOnly": boolean("Mount read-only."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
            "sslEnabled": boolean("Use SSL."),
            "storageMode": string("ThickProvisioned or ThinProvisioned."),
            "storagePool": string("The storage pool."),
            "system": string("The system name."),
            "volumeName": string("The volume name."),
        }, ["gateway", "secretRef", "system"],
    ),
    CORE + "SecretProjection": definition(
        "Secret keys projected into a projected volume.",
        {
            "items": array(ref(CORE + "KeyToPath"), "Which keys to project and where; all keys when empty."),
            "name": string("The Secret's name."),
            "optional": boolean("Whether the Secret may be missing."),
        },
    ),
    CORE + "SecretVolumeSource": definition(
        "A Secret whose keys appear as files in a volume.",
        {
            "defaultMode": integer("File mode bits of the created files. Defaults to 0644."),
            "items": array(ref(CORE + "KeyToPath"), "Which keys to project and where; all keys when empty."),
            "optional": boolean("Whether the Secret may be missing."),
            "secretName": string("The Secret's name."),
        },
    ),
    CORE + "ServiceAccountTokenProjection": definition(
        "A service account token projected into a volume.",
        {
            "audience": string("The intended audience of the token."),
            "expirationSeconds": int64("Requested token lifetime. Defaults to one hour."),
            "path": string("The file path of the token."),
        }, ["path"],
    ),
    CORE + "StorageOSVolumeSource": definition(
        "A StorageOS volume mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "readOnly": boolean("Mount read-only."),
            "secretRef": ref(CORE + "LocalObjectReference", "A Secret with credentials."),
            "volumeName": string("The volume name."),
            "volumeNamespace": string("The volume namespace."),
        },
    ),
    CORE + "Volume": definition(
        "A named volume the pod's containers can mount.",
        {
            "awsElasticBlockStore": ref(CORE + "AWSElasticBlockStoreVolumeSource", "An AWS EBS disk."),
            "azureDisk": ref(CORE + "AzureDiskVolumeSource", "An Azure data disk."),
            "azureFile": ref(CORE + "AzureFileVolumeSource", "An Azure File share."),
            "cephfs": ref(CORE + "CephFSVolumeSource", "A Ceph filesystem."),
            "cinder": ref(CORE + "CinderVolumeSource", "A Cinder volume."),
            "configMap": ref(CORE + "ConfigMapVolumeSource", "A ConfigMap."),
            "csi": ref(CORE + "CSIVolumeSource", "A CSI driver's volume."),
            "downwardAPI": ref(CORE + "DownwardAPIVolumeSource", "Pod metadata as files."),
            "emptyDir": ref(CORE + "EmptyDirVolumeSource", "A scratch directory."),
            "ephemeral": ref(CORE + "EphemeralVolumeSource", "A claim that lives as long as the pod."),
            "fc": ref(CORE + "FCVolumeSource", "A Fibre Channel volume."),
            "flexVolume": ref(CORE + "FlexVolumeSource", "A FlexVolume driver's volume."),
            "flocker": ref(CORE + "FlockerVolumeSource", "A Flocker dataset."),
            "gcePersistentDisk": ref(CORE + "GCEPersistentDiskVolumeSource", "A GCE persistent disk."),
            "gitRepo": ref(CORE + "GitRepoVolumeSource", "A git repository checkout (deprecated)."),
            "glusterfs": ref(CORE + "GlusterfsVolumeSource", "A Glusterfs volume."),
            "hostPath": ref(CORE + "HostPathVolumeSource", "A path on the node."),
            "iscsi": ref(CORE + "ISCSIVolumeSource", "An iSCSI disk."),
            "name": string("The volume's name, a DNS label unique within the pod."),
            "nfs": ref(CORE + "NFSVolumeSource", "An NFS export."),
            "persistentVolumeClaim": ref(CORE + "PersistentVolumeClaimVolumeSource", "The volume bound to a claim."),
            "photonPersistentDisk": ref(CORE + "PhotonPersistentDiskVolumeSource", "A Photon Controller disk."),
            "portworxVolume": ref(CORE + "PortworxVolumeSource", "A Portworx volume."),
            "projected": ref(CORE + "ProjectedVolumeSource", "Several sources in one directory."),
            "quobyte": ref(CORE + "QuobyteVolumeSource", "A Quobyte volume."),
            "rbd": ref(CORE + "RBDVolumeSource", "A Rados block device."),
            "scaleIO": ref(CORE + "ScaleIOVolumeSource", "A ScaleIO volume."),
            "secret": ref(CORE + "SecretVolumeSource", "A Secret."),
            "storageos": ref(CORE + "StorageOSVolumeSource", "A StorageOS volume."),
            "vsphereVolume": ref(CORE + "VsphereVirtualDiskVolumeSource", "A vSphere disk."),
        }, ["name"],
    ),
    CORE + "VolumeProjection": definition(
        "One source of a projected volume.",
        {
            "configMap": ref(CORE + "ConfigMapProjection", "A ConfigMap to project."),
            "downwardAPI": ref(CORE + "DownwardAPIProjection", "Downward API data to project."),
            "secret": ref(CORE + "SecretProjection", "A Secret to project."),
            "serviceAccountToken": ref(CORE + "ServiceAccountTokenProjection", "A service account token to project."),
        },
    ),
    CORE + "VsphereVirtualDiskVolumeSource": definition(
        "A vSphere disk mounted into the pod.",
        {
            "fsType": string("Filesystem type to mount, such as ext4."),
            "storagePolicyID": string("The storage policy ID."),
            "storagePolicyName": string("The storage policy name."),
            "volumePath": string("The path of the disk."),
        }, ["volumePath"],
    ),
}
