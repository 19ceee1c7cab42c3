/* The code protoc-c generates for the messages of Caffe's caffe.proto that trainc reads and
 * writes (runtime/data/caffe_datum.proto): one object that the LMDB reader (lmdb_datum.c) and
 * the caffemodel reader and writer (caffemodel.c) share, linked only where one of them is. */
#ifdef RT_WITH_LMDB
#include "caffe_datum.pb-c.c"
#else
typedef int rt_caffe_proto_absent;   /* WITH_LMDB=0: no protobuf-c (ISO C wants something here) */
#endif
