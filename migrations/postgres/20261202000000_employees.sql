-- The reference host's org chart: each organisation's people and who
-- manages whom (no manager: the top of the chart), read as a UI5 tree
-- table through the `Employees` set's hierarchy.
CREATE TABLE employees (
    id BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
    manager_id BIGINT NULL REFERENCES employees (id) ON DELETE SET NULL,
    name VARCHAR(255) NOT NULL,
    title VARCHAR(255) NOT NULL
);
CREATE INDEX employees_manager_id_index ON employees (manager_id);
CREATE INDEX employees_organisation_id_index ON employees (organisation_id);
