/*
 * arena_tree.h: the ordered index the arena keeps its ranges in.
 *
 * An intrusive AVL tree: the caller embeds a struct arena_tree_node in its
 * own record and supplies the order, so inserting and removing never
 * allocate (a free can not fail halfway) and every operation is O(log n).
 * Keys must be unique under the order: removal finds a node by its key.
 * Not thread-safe: the arena's lock covers it.
 */
#ifndef UMKIT_ARENA_TREE_H
#define UMKIT_ARENA_TREE_H

#include <stddef.h>

struct arena_tree_node {
	struct arena_tree_node *left, *right;
	int height; /* of the subtree rooted here; a leaf is 1 */
};

/* Negative, zero or positive as a orders before, equal to or after b. */
typedef int (*arena_tree_cmp)(const struct arena_tree_node *a, const struct arena_tree_node *b);

struct arena_tree {
	struct arena_tree_node *root;
	arena_tree_cmp cmp;
};

static inline void arena_tree_init(struct arena_tree *t, arena_tree_cmp cmp)
{
	t->root = NULL;
	t->cmp = cmp;
}

/* Adds n, whose key no node in t has. */
void arena_tree_insert(struct arena_tree *t, struct arena_tree_node *n);

/* Takes n, which is in t, out of t. */
void arena_tree_remove(struct arena_tree *t, struct arena_tree_node *n);

/* The first node not ordered before probe (the smallest >= probe), or NULL.
 * probe only needs its key set; it need not be in t. */
struct arena_tree_node *arena_tree_ceil(const struct arena_tree *t, const struct arena_tree_node *probe);

/* The last node not ordered after probe (the largest <= probe), or NULL. */
struct arena_tree_node *arena_tree_floor(const struct arena_tree *t, const struct arena_tree_node *probe);

#endif
