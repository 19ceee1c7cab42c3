"""Caffe's .caffemodel files for the tests, through Google's protobuf (python3-protobuf): the
NetParameter, LayerParameter, V1LayerParameter and BlobProto messages of Caffe's caffe.proto,
declared here from Caffe's field numbers and types (a descriptor built in Python, not the
protobuf-c code under test). write() writes a model in today's form (`layer`, BlobShape) or in
the BVLC reference models' V1 form (`layers` with V1's type enum, blobs shaped by
num/channels/height/width); read() reads either into {name: (type, [numpy arrays])}."""
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED

# message: [(field, number, type, label, message type or None, packed)]
MESSAGES = {
    "BlobShape": [("dim", 1, F.TYPE_INT64, REP, None, True)],
    "BlobProto": [("num", 1, F.TYPE_INT32, OPT, None, False), ("channels", 2, F.TYPE_INT32, OPT, None, False),
                  ("height", 3, F.TYPE_INT32, OPT, None, False), ("width", 4, F.TYPE_INT32, OPT, None, False),
                  ("data", 5, F.TYPE_FLOAT, REP, None, True), ("diff", 6, F.TYPE_FLOAT, REP, None, True),
                  ("shape", 7, F.TYPE_MESSAGE, OPT, "BlobShape", False),
                  ("double_data", 8, F.TYPE_DOUBLE, REP, None, True)],
    "LayerParameter": [("name", 1, F.TYPE_STRING, OPT, None, False), ("type", 2, F.TYPE_STRING, OPT, None, False),
                       ("bottom", 3, F.TYPE_STRING, REP, None, False), ("top", 4, F.TYPE_STRING, REP, None, False),
                       ("loss_weight", 5, F.TYPE_FLOAT, REP, None, False),
                       ("blobs", 7, F.TYPE_MESSAGE, REP, "BlobProto", False),
                       ("phase", 10, F.TYPE_ENUM, OPT, "Phase", False)],
    "V1LayerParameter": [("bottom", 2, F.TYPE_STRING, REP, None, False), ("top", 3, F.TYPE_STRING, REP, None, False),
                         ("name", 4, F.TYPE_STRING, OPT, None, False), ("type", 5, F.TYPE_ENUM, OPT, "LayerType", False),
                         ("blobs", 6, F.TYPE_MESSAGE, REP, "BlobProto", False)],
    "NetParameter": [("name", 1, F.TYPE_STRING, OPT, None, False),
                     ("layers", 2, F.TYPE_MESSAGE, REP, "V1LayerParameter", False),
                     ("input", 3, F.TYPE_STRING, REP, None, False),
                     ("layer", 100, F.TYPE_MESSAGE, REP, "LayerParameter", False)],
}
# V1LayerParameter.LayerType, the values of the layers the tests write
V1_TYPES = {"Convolution": 4, "Data": 5, "Dropout": 6, "InnerProduct": 14, "Pooling": 17, "ReLU": 18,
            "SoftmaxWithLoss": 21}


def _classes():
    fdp = descriptor_pb2.FileDescriptorProto(name="caffe_model_test.proto", package="caffe", syntax="proto2")
    phase = fdp.enum_type.add(name="Phase")
    phase.value.add(name="TRAIN", number=0)
    phase.value.add(name="TEST", number=1)
    for mname, fields in MESSAGES.items():
        m = fdp.message_type.add(name=mname)
        if mname == "V1LayerParameter":
            e = m.enum_type.add(name="LayerType")
            e.value.add(name="NONE", number=0)
            for tname, number in V1_TYPES.items():
                e.value.add(name=tname.upper(), number=number)
        for fname, number, kind, label, ref, packed in fields:
            f = m.field.add(name=fname, number=number, type=kind, label=label)
            if ref:
                f.type_name = ".caffe.V1LayerParameter.LayerType" if ref == "LayerType" else ".caffe." + ref
            if packed:
                f.options.packed = True
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    out = {}
    for mname in MESSAGES:
        desc = pool.FindMessageTypeByName("caffe." + mname)
        out[mname] = (message_factory.GetMessageClass(desc) if hasattr(message_factory, "GetMessageClass")
                      else message_factory.MessageFactory(pool).GetPrototype(desc))
    return out


M = _classes()


def write(path, layers, name="net", v1=False):
    """layers: [(name, type, bottom, top, [numpy arrays])], blobs in Caffe's shapes."""
    net = M["NetParameter"](name=name)
    for lname, ltype, bottom, top, blobs in layers:
        if v1:
            L = net.layers.add(name=lname, type=V1_TYPES[ltype])
        else:
            L = net.layer.add(name=lname, type=ltype)
        if bottom:
            L.bottom.append(bottom)
        if top:
            L.top.append(top)
        for b in blobs:
            B = L.blobs.add()
            if v1:   # the old 4-D shape: leading 1s, as Caffe's legacy blobs
                dims = [1] * (4 - b.ndim) + list(b.shape)
                B.num, B.channels, B.height, B.width = dims
            else:
                B.shape.dim.extend(b.shape)
            B.data.extend(b.astype(np.float32).ravel().tolist())
    open(path, "wb").write(net.SerializeToString())


def read(path):
    net = M["NetParameter"]()
    net.ParseFromString(open(path, "rb").read())
    out = {}
    for L in list(net.layer) + list(net.layers):
        blobs = []
        for B in L.blobs:
            shape = list(B.shape.dim) if B.HasField("shape") else [B.num, B.channels, B.height, B.width]
            values = np.array(B.data if len(B.data) else B.double_data, dtype=np.float32)
            blobs.append(values.reshape(shape))
        kind = L.type if isinstance(L.type, str) else {v: k for k, v in V1_TYPES.items()}.get(L.type, str(L.type))
        out[L.name] = (kind, blobs, list(L.bottom), list(L.top))
    return net.name, out
