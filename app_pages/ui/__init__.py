"""What the pages draw with: links and addresses, the app's datasets and navigation here, and one
package per page (train, compare, speed). Training itself runs in ``app_pages.engine``."""
