namespace tree;

// The tree benchmark's nodes: 100,000 rows written by bench/odata_tree_data.py
// (10 roots; node p's children are 10p+1 … 10p+10). Table tree_Nodes, the
// parent's key in parent_ID (empty for a root).
entity Nodes {
  key ID     : Integer;
      name   : String(100);
      parent : Association to Nodes;
}
