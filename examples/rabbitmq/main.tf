# A virtual host for an orders service on a RabbitMQ you run: a user for the
# service, what it may do there, a topic exchange, a queue bound to it and
# a policy that bounds the queue. See README.md for how to run it.

terraform {
  required_providers {
    rabbitmq = { source = "./rabbitmq.wasm" }
  }
}

variable "admin_credentials" {
  description = "user:password of a RabbitMQ administrator, for the grant below (never seen by the provider)."
  default     = "guest:guest"
  sensitive   = true
}

variable "app_password" {
  description = "The password of the orders service's user."
  default     = "change-me"
  sensitive   = true
}

# The management API of the RabbitMQ to manage: change both URLs for
# another server (a grant is written literally, so that what a provider may
# reach is read from the configuration alone).
provider "rabbitmq" {
  endpoint = "http://127.0.0.1:15672"
  sandbox {
    # The provider reaches this origin only; cairn adds the credentials to
    # each request on its way out, so the provider never holds them.
    http {
      url     = "http://127.0.0.1:15672"
      headers = { Authorization = "Basic ${base64encode(var.admin_credentials)}" }
    }
  }
}

resource "rabbitmq_vhost" "orders" {
  name        = "orders"
  description = "The orders service"
}

resource "rabbitmq_user" "orders" {
  name     = "orders-service"
  password = var.app_password
  tags     = ["management"]
}

resource "rabbitmq_permissions" "orders" {
  user  = rabbitmq_user.orders.name
  vhost = rabbitmq_vhost.orders.name
  permissions {
    configure = "^orders\\."
    write     = ".*"
    read      = ".*"
  }
}

resource "rabbitmq_exchange" "events" {
  name  = "events"
  vhost = rabbitmq_vhost.orders.name
  settings {
    type    = "topic"
    durable = true
  }
}

resource "rabbitmq_queue" "created" {
  name  = "orders.created"
  vhost = rabbitmq_vhost.orders.name
  settings {
    durable   = true
    arguments = { "x-queue-type" = "classic", "x-max-length" = "100000" }
  }
}

resource "rabbitmq_binding" "created" {
  vhost            = rabbitmq_vhost.orders.name
  source           = rabbitmq_exchange.events.name
  destination      = rabbitmq_queue.created.name
  destination_type = "queue"
  routing_key      = "orders.created.#"

  # A replaced queue comes without the old one's bindings.
  lifecycle {
    replace_triggered_by = [rabbitmq_queue.created]
  }
}

resource "rabbitmq_policy" "bounded" {
  name  = "bounded"
  vhost = rabbitmq_vhost.orders.name
  policy {
    pattern    = "^orders\\."
    priority   = 1
    apply_to   = "queues"
    definition = { "max-length-bytes" = "104857600" }
  }
}

output "binding_id" {
  value = rabbitmq_binding.created.id
}
