# An application's database on your own PostgreSQL: an owner role and a
# read-only role, a database, a schema, grants, and an extension.
#
#   PGPASSWORD=… cairn apply examples/postgresql
#
# The provider reaches exactly one address, the `connect` grant below: the
# one line to change for another server (with `host` and `port`).

variable "app_password" {
  type      = string
  sensitive = true
  default   = "change-me"
}

variable "reader_password" {
  type      = string
  sensitive = true
  default   = "change-me-too"
}

provider "postgresql" {
  host     = "127.0.0.1"
  port     = 5432
  username = "postgres"
  database = "postgres"
  sslmode  = "disable"
  sandbox {
    connect = ["127.0.0.1:5432"]
    # The administrator's password, if the server asks for one.
    env = ["PGPASSWORD"]
  }
}

resource "postgresql_role" "app" {
  name     = "shop_app"
  login    = true
  password = var.app_password
}

resource "postgresql_role" "reader" {
  name             = "shop_reader"
  login            = true
  password         = var.reader_password
  connection_limit = 10
}

resource "postgresql_database" "shop" {
  name  = "shop"
  owner = postgresql_role.app.name
}

resource "postgresql_schema" "orders" {
  name     = "orders"
  database = postgresql_database.shop.name
  owner    = postgresql_role.app.name
}

# Case-insensitive text for e-mail addresses, from postgresql-contrib.
resource "postgresql_extension" "citext" {
  name     = "citext"
  database = postgresql_database.shop.name
  schema   = postgresql_schema.orders.name
}

resource "postgresql_grant" "reader_connect" {
  role        = postgresql_role.reader.name
  database    = postgresql_database.shop.name
  object_type = "database"
  privileges  = ["CONNECT"]
}

resource "postgresql_grant" "reader_usage" {
  role        = postgresql_role.reader.name
  database    = postgresql_database.shop.name
  schema      = postgresql_schema.orders.name
  object_type = "schema"
  privileges  = ["USAGE"]
}

resource "postgresql_grant" "reader_tables" {
  role        = postgresql_role.reader.name
  database    = postgresql_database.shop.name
  schema      = postgresql_schema.orders.name
  object_type = "table"
  privileges  = ["SELECT"]
}
