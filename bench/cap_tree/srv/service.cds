using { tree as db } from '../db/schema';

// Served at /odata/v4/tree, without authorization checks, as the catalog
// peer. The hierarchy as capire declares it for a UI5 tree table: the
// computed properties as null columns of the projection, and both
// annotations with the qualifier NodesHierarchy.
service TreeService {
  @readonly entity Nodes as projection on db.Nodes {
    *,
    null as LimitedDescendantCount : Integer,
    null as DistanceFromRoot       : Integer,
    null as DrillState             : String,
    null as LimitedRank            : Integer
  };
}

annotate TreeService.Nodes with @Aggregation.RecursiveHierarchy #NodesHierarchy: {
  NodeProperty             : ID,
  ParentNavigationProperty : parent
};

annotate TreeService.Nodes with @Hierarchy.RecursiveHierarchy #NodesHierarchy: {
  LimitedDescendantCount : LimitedDescendantCount,
  DistanceFromRoot       : DistanceFromRoot,
  DrillState             : DrillState,
  LimitedRank            : LimitedRank
};
