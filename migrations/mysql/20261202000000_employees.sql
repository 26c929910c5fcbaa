-- The reference host's org chart: each organisation's people and who
-- manages whom (no manager: the top of the chart), read as a UI5 tree
-- table through the `Employees` set's hierarchy.
CREATE TABLE employees (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    organisation_id BIGINT UNSIGNED NOT NULL,
    manager_id BIGINT UNSIGNED NULL,
    name VARCHAR(255) NOT NULL,
    title VARCHAR(255) NOT NULL,
    INDEX employees_manager_id_index (manager_id),
    INDEX employees_organisation_id_index (organisation_id),
    FOREIGN KEY (organisation_id) REFERENCES organisations (id) ON DELETE CASCADE,
    FOREIGN KEY (manager_id) REFERENCES employees (id) ON DELETE SET NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
