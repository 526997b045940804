/* Names: error strings, protocol and arch lookup. */
#include "internal.h"

const char *mm_strerror(int err)
{
	switch (err) {
	case MM_OK: return "ok";
	case MM_EINVAL: return "EINVAL";
	case MM_EALIGN: return "EALIGN";
	case MM_ERANGE: return "ERANGE";
	case MM_EOUTSIDE: return "EOUTSIDE";
	case MM_ENOTLOCKED: return "ENOTLOCKED";
	case MM_EEXIST: return "EEXIST";
	case MM_EMAPPED: return "EMAPPED";
	case MM_ENOMEM: return "ENOMEM";
	case MM_EHUGE: return "EHUGE";
	case MM_EPROT: return "EPROT";
	default: return "E?";
	}
}

static bool name_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

const struct mm_protocol *mm_proto_by_name(const char *name)
{
	if (name_eq(name, "rw"))
		return &mm_proto_rw;
	if (name_eq(name, "adv"))
		return &mm_proto_adv;
	if (name_eq(name, "vma"))
		return &mm_proto_vma;
	return 0;
}

