/*
 * arena_tree.c: the AVL tree behind the arena's indexes (arena_tree.h).
 *
 * Recursive on purpose: an AVL tree of n nodes is at most 1.44 log2(n)
 * deep, so the recursion stays shallow and the code stays short enough to
 * check by eye.
 */
#include "arena_tree.h"

#include <stdbool.h>

typedef struct arena_tree_node node;

static int height(const node *n)
{
	return n ? n->height : 0;
}

static void update_height(node *n)
{
	int l = height(n->left), r = height(n->right);
	n->height = 1 + (l > r ? l : r);
}

static node *rotate_right(node *top)
{
	node *pivot = top->left;
	top->left = pivot->right;
	pivot->right = top;
	update_height(top);
	update_height(pivot);
	return pivot;
}

static node *rotate_left(node *top)
{
	node *pivot = top->right;
	top->right = pivot->left;
	pivot->left = top;
	update_height(top);
	update_height(pivot);
	return pivot;
}

/* Restores the AVL invariant at n after one of its subtrees changed height
 * by at most one; returns the subtree's new root. */
static node *rebalance(node *n)
{
	update_height(n);
	int balance = height(n->left) - height(n->right);
	if (balance > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (balance < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	return n;
}

/* rebalance, setting *changed to whether the subtree's height changed: the
 * levels above depend on that height alone, so when it did not, they are
 * left as they are (each would otherwise read both of its children). */
static node *rebalance_tracked(node *n, bool *changed)
{
	int before = n->height;
	node *top = rebalance(n);
	*changed = top->height != before;
	return top;
}

static node *insert_below(node *root, node *n, arena_tree_cmp cmp, bool *taller)
{
	if (!root) {
		n->left = n->right = NULL;
		n->height = 1;
		*taller = true;
		return n;
	}
	if (cmp(n, root) < 0)
		root->left = insert_below(root->left, n, cmp, taller);
	else
		root->right = insert_below(root->right, n, cmp, taller);
	return *taller ? rebalance_tracked(root, taller) : root;
}

void arena_tree_insert(struct arena_tree *t, struct arena_tree_node *n)
{
	bool taller;
	t->root = insert_below(t->root, n, t->cmp, &taller);
}

static node *detach_min(node *root, node **min, bool *shorter)
{
	if (!root->left) {
		*min = root;
		*shorter = true;
		return root->right;
	}
	root->left = detach_min(root->left, min, shorter);
	return *shorter ? rebalance_tracked(root, shorter) : root;
}

static node *remove_below(node *root, node *n, arena_tree_cmp cmp, bool *shorter)
{
	if (!root) {
		*shorter = false;
		return NULL;
	}
	if (root == n) {
		node *top = n->left;
		if (n->right) {
			bool ignored;
			node *successor;
			node *right = detach_min(n->right, &successor, &ignored);
			successor->left = n->left;
			successor->right = right;
			top = rebalance(successor);
		}
		*shorter = height(top) != n->height;
		return top;
	}
	if (cmp(n, root) < 0)
		root->left = remove_below(root->left, n, cmp, shorter);
	else
		root->right = remove_below(root->right, n, cmp, shorter);
	return *shorter ? rebalance_tracked(root, shorter) : root;
}

void arena_tree_remove(struct arena_tree *t, struct arena_tree_node *n)
{
	bool shorter;
	t->root = remove_below(t->root, n, t->cmp, &shorter);
}

struct arena_tree_node *arena_tree_ceil(const struct arena_tree *t, const struct arena_tree_node *probe)
{
	node *best = NULL;
	for (node *cur = t->root; cur;) {
		if (t->cmp(cur, probe) >= 0) {
			best = cur;
			cur = cur->left;
		} else {
			cur = cur->right;
		}
	}
	return best;
}

struct arena_tree_node *arena_tree_floor(const struct arena_tree *t, const struct arena_tree_node *probe)
{
	node *best = NULL;
	for (node *cur = t->root; cur;) {
		if (t->cmp(cur, probe) <= 0) {
			best = cur;
			cur = cur->right;
		} else {
			cur = cur->left;
		}
	}
	return best;
}
